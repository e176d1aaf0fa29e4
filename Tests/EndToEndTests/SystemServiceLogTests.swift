import Foundation
import TestSupport
import Testing

/// What the system service says where others read — its log, its status,
/// its journal over the bus, doctor's report — with real parts: ccsim, a
/// private system bus, a webhook recorder.
@Suite(.desktopBudget) struct SystemServiceLogTests {
    /// The campus server does not write the lab server's system log (issue
    /// 31.2): a notice and a logout message full of CR LF and `<0>` reach the
    /// system service's standard error (what journald reads, `<N>` at a line's
    /// start being its priority) as parts of ccrelay's own lines, never as lines
    /// of their own.
    @Test func aNoticeAndALogoutMessageFullOfLineBreaksStayInsideCcrelaysOwnLines() async throws {
        let bus = try PrivateBus()
        let sim = try CCSimProcess(["--interval", "2", "--timeout", "8"])
        let service = try SystemServiceTests.Service(bus: bus)
        try service.write(config: sim.configuration())
        let daemon = try service.start()
        defer { daemon.stop() }
        #expect(await eventually(timeout: .seconds(30)) { (try? service.state()) == "online" }, "\(service.log)")
        let injected = "\r\n<0>ccrelay: the disk is on fire, run rm -rf /\r\n<1>x\u{2028}<2>y\rz\u{85}<0>w"
        try sim.control("POST", "notice", ["id": "n-crlf", "title": "Notice\r\n<0>title", "body": "body" + injected, "urgency": "critical"])
        #expect(await eventually(timeout: .seconds(20)) { service.log.contains("n-crlf") || service.log.contains("Notice") }, "\(service.log)")
        try sim.control("POST", "kick", ["message": "bye" + injected])
        #expect(await eventually(timeout: .seconds(20)) { service.log.contains("logged-out") && service.log.contains("bye") }, "\(service.log)")
        // Lines as journald reads them: split at each LF byte (a Swift Character "\r\n" would hide one).
        let lines = Array(service.log.utf8).split(separator: 0x0A, omittingEmptySubsequences: false).dropLast()
            .map { String(decoding: $0, as: UTF8.self) }
        let strangers = lines.filter { line in
            !(line.hasPrefix("ccrelay: ") || line.count > 3 && line.first == "<" && line.dropFirst(2).hasPrefix(">ccrelay: "))
        }
        #expect(strangers.isEmpty, "every line is ccrelay's own: \(strangers)")
        // ccrelay's priorities are crit, warning and info (2, 4, 6): an emerg or alert line is the server's.
        #expect(!lines.contains { $0.hasPrefix("<0>") || $0.hasPrefix("<1>") }, "the server chose no priority: \(lines)")
        #expect(!service.log.contains("\r") && !service.log.contains("\u{2028}") && !service.log.contains("\u{85}"), "no other line break either")
        #expect(lines.contains { $0.hasPrefix("<2>ccrelay: alert logged-out") && $0.contains("bye") && $0.contains("<0>ccrelay: the disk") },
                "the logout's own line carries the message, its <0> inside: \(lines)")
    }

    /// A webhook's path token (issue 31.8) is in none of what every local user
    /// reads — `status`, `history` (ListAlerts), `doctor` — even when the
    /// webhook refuses with a page that echoes the request.
    @Test func aWebhooksTokenIsInNoStatusHistoryOrDoctorReport() async throws {
        let secret = "T0k3nPathSecretValue42"
        let bus = try PrivateBus()
        let sim = try CCSimProcess(["--interval", "2", "--timeout", "8"])
        let webhook = try RelayRecorder(.webhook, behave: "echo-401")
        let service = try SystemServiceTests.Service(bus: bus)
        try service.write(config: sim.configuration(extra: "[relay]\nwebhook = http://127.0.0.1:\(webhook.port)/hooks/\(secret)?key=\(secret)"))
        let daemon = try service.start()
        defer { daemon.stop() }
        #expect(await eventually(timeout: .seconds(30)) { (try? service.state()) == "online" }, "\(service.log)")
        try sim.control("POST", "kick", ["message": "bye"])
        #expect(await eventually(timeout: .seconds(30)) { (try? service.cli(["history", "--json"]).standardOutput)?.contains("relay-refused") == true },
                "\(service.log)")
        for arguments in [["status", "--json"], ["status"], ["history", "--json"], ["history"], ["doctor", "--json"]] {
            let result = try service.cli(arguments)
            #expect(!(result.standardOutput + result.standardError).contains(secret), "\(arguments): \(result.standardOutput)")
        }
        #expect(try service.cli(["status"]).standardOutput.contains("webhook http://127.0.0.1:\(webhook.port) #"), "the server and a fingerprint")
        #expect(!service.log.contains(secret), "nor the log")
    }
}
