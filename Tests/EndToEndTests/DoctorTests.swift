import Foundation
import TestSupport
import Testing

/// `ccrelay doctor` (issue 25): a report that is right about a healthy setup,
/// never crashes without a daemon, a bus or a readable configuration, and
/// never shows an identifier.
@Suite(.desktopBudget) struct DoctorTests {
    func findings(_ output: String) -> [[String: Any]] {
        (try? JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]]) ?? []
    }

    @Test func aHealthySetupIsReportedAndNoIdentifierShows() async throws {
        let rig = try await DaemonRig()
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        // The configuration doctor reads names an account: it must not appear.
        let config = rig.configPath + ".doctor"
        try (String(contentsOfFile: rig.configPath, encoding: .utf8).replacingOccurrences(of: "[keepalive]", with: "[auth]\nuser = 20231234\n[keepalive]"))
            .write(toFile: config, atomically: true, encoding: .utf8)
        chmod(config, 0o600)
        let result = try rig.cli(["doctor", "--json", "--config", config], environment: ["HOME": "/home/student-x"])
        let report = findings(result.standardOutput)
        func verdict(_ area: String) -> String? { report.first { $0["area"] as? String == area }?["verdict"] as? String }
        #expect(verdict("configuration") == "ok", "\(report)")
        #expect(verdict("daemon") == "ok" && verdict("notifications") == "ok", "\(report)")
        let daemon = report.first { $0["area"] as? String == "daemon" }?["text"] as? String ?? ""
        #expect(daemon.contains("online") && daemon.contains("127.0.x.x"), "the address cut to its first two parts: \(daemon)")
        #expect(!result.standardOutput.contains("20231234"), "the account never shows")
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        // The network lines: libcurl, the certificate, the server over IPv4 without a login, the timeline.
        func texts(_ area: String) -> [String] { report.filter { $0["area"] as? String == area }.compactMap { $0["text"] as? String } }
        #expect(texts("libraries").first?.contains("libcurl") == true, "\(report)")
        #expect(verdict("certificate") == "ok" && texts("certificate").first?.contains("expires") == true, "\(report)")
        #expect(texts("server").contains { $0.hasPrefix("IPv4 127.0.x.x: name, TCP and TLS ok") }, "\(texts("server"))")
        #expect(texts("timeline").contains { $0.contains("logging-in → online") }, "\(texts("timeline"))")
        #expect(texts("outside").first?.contains("[probe] mode = off") == true, "\(report)")
        #expect(texts("journal").first?.contains("schema 5") == true, "\(report)")
        let sessions = try rig.sim.sessions()
        #expect(sessions.count == 1, "the doctor never logs in: \(sessions.count) sessions")
        let token = try #require(sessions.first?["session"] as? String)
        #expect(!result.standardOutput.contains(token), "the session token never shows")
        let human = try rig.cli(["doctor", "--config", config]).standardOutput
        #expect(human.contains("ok   daemon") && !human.contains("20231234"), "\(human)")
    }

    @Test func withoutADaemonABusOrAReadableConfigurationItSaysSoAndFails() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-doctor-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder + "/ccrelay.conf", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try run(DaemonRig.ccrelay, ["doctor", "--json", "--config", folder + "/ccrelay.conf"], environment: [
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus", "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/bus",
            "XDG_STATE_HOME": folder + "/state",
        ])
        #expect(result.status == 1, "\(result.standardOutput)\(result.standardError)")
        let report = findings(result.standardOutput)
        #expect(report.contains { $0["area"] as? String == "configuration" && $0["verdict"] as? String == "fail"
            && ($0["text"] as? String)?.contains("not a regular file") == true || ($0["text"] as? String)?.contains("directory") == true },
                "\(report)")
        #expect(report.contains { $0["area"] as? String == "daemon" && $0["verdict"] as? String == "fail" }, "\(report)")
        #expect(report.contains { $0["area"] as? String == "session bus" }, "\(report)")
        #expect(report.allSatisfy { $0["verdict"] as? String != "fail" || $0["fix"] is String || $0["area"] as? String == "configuration" },
                "every fail says its fix")
    }

    /// A server that refuses the student certificate in the handshake: the
    /// server line fails with the reason and the fix; nothing logs in.
    @Test func aServerThatRefusesTheCertificateIsAFailWithTheReasonAndTheFix() async throws {
        let pki = TestPKI.shared
        let server = try await TLSServerProcess(certificate: pki.serverCertificate, key: pki.serverKey, clientCA: pki.caCertificate)
        let rig = try await DaemonRig(certificate: (pki.strangerCertificate, pki.strangerKey), serverURL: server.url)
        let result = try rig.cli(["doctor", "--json", "--config", rig.configPath])
        let report = findings(result.standardOutput)
        let line = report.first { $0["area"] as? String == "server" && ($0["text"] as? String)?.hasPrefix("IPv4") == true }
        #expect(line?["verdict"] as? String == "fail", "\(report)")
        #expect((line?["text"] as? String)?.contains("refused your student certificate") == true, "\(report)")
        #expect((line?["fix"] as? String)?.contains("ccrelay setup") == true, "\(report)")
        #expect(result.status == 1)
    }
}
