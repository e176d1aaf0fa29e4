import Foundation
import TestSupport
import Testing

/// `ccrelay-daemon --discover` (issue 32.5), the facts `ccrelay setup`
/// offers: one `NAME<TAB>VALUE` a line, from a Srun portal, a Ruijie one, a
/// page that answers itself, none — and from a hostile portal, whose words
/// reach the terminal bounded and without a control character.
@Suite struct DiscoverCommandTests {
    static let daemon = buildProductsDirectory.appendingPathComponent("ccrelay-daemon").path

    /// A loopback page server answering each path from `script` (Tests/Fixtures/srun_portal.py).
    final class ScriptedPages: Sendable {
        let process: ChildProcess
        let url: String

        init(_ script: [String: [[String: Any]]]) throws {
            let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Fixtures").path
            let base = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-discover-\(UUID().uuidString)").path
            try JSONSerialization.data(withJSONObject: script).write(to: URL(fileURLWithPath: base + ".json"))
            process = try ChildProcess("/usr/bin/python3", [fixtures + "/srun_portal.py", "--script", base + ".json", "--record", base + ".jsonl"])
            guard let line = process.readLine(), line.hasPrefix("port=") else { throw TestSetupError("the page server did not start") }
            url = "http://127.0.0.1:\(line.dropFirst(5))/"
        }
    }

    /// The facts, in order, and the exit status.
    static func discover(_ urls: [String]) throws -> (facts: [(String, String)], status: Int32, output: String) {
        let result = try run(daemon, ["--discover"] + urls)
        let facts = result.standardOutput.split(whereSeparator: \.isNewline).map { line -> (String, String) in
            let parts = line.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "<no tab>")
        }
        return (facts, result.status, result.standardOutput)
    }

    @Test func aSrunPortalIsFoundFromAnAnonymousRequestToTheOutside() throws {
        let sim = try CCSimProcess(tls: false, ["--protocol", "srun", "--ac-id", "12", "--user", "2024000001:pw"])
        let port = sim.url.split(separator: ":").last.map { String($0.dropLast()) } ?? ""
        let outside = "http://[::ffff:127.0.0.1]:\(port)/generate_204"
        let (facts, status, output) = try Self.discover([outside])
        #expect(status == 0, "\(output)")
        #expect(facts.map(\.0) == ["from", "family", "landing", "portal", "ac_id", "client_ip", "srun_ver", "online"], "\(output)")
        #expect(facts.map(\.1) == [outside, "srun", sim.url, sim.url, "12", "127.0.0.1", "SRunCGIAuthIntfSvr V1.18 B20210909", "no"], "\(output)")
        #expect(try sim.sessions().isEmpty, "no login")
    }

    @Test func aRuijiePortalAPageThatAnswersItselfAndNoAnswerAreSaidSo() throws {
        let pages = try ScriptedPages([
            "/generate_204": [["status": 302, "headers": ["Location": "/eportal/index.jsp?wlanuserip=10.1.2.3"]]],
            "/eportal/index.jsp": [["raw": "<html><title>Ruijie</title></html>"]],
            "/ok": [["status": 204]],
        ])
        let ruijie = try Self.discover([pages.url + "generate_204"])
        #expect(ruijie.status == 0 && ruijie.facts.map(\.0) == ["from", "family", "landing"], "\(ruijie.output)")
        #expect(ruijie.facts.first { $0.0 == "family" }?.1 == "ruijie", "\(ruijie.output)")
        let none = try Self.discover([pages.url + "ok"])
        #expect(none.facts.first { $0.0 == "family" }?.1 == "none", "\(none.output)")
        // The first URL does not answer: the next one is asked.
        let closed = try Self.discover(["http://127.0.0.1:1/", pages.url + "ok"])
        #expect(closed.status == 0 && closed.facts.first?.1 == pages.url + "ok", "\(closed.output)")
        let nothing = try Self.discover(["http://127.0.0.1:1/"])
        #expect(nothing.status == 1 && nothing.facts.map(\.0) == ["from", "family", "error"], "\(nothing.output)")
        #expect(nothing.facts[1].1 == "unreachable" && nothing.facts[2].1.contains("no connection"), "\(nothing.output)")
        #expect(try run(Self.daemon, ["--discover", "--what"]).status == 2)
    }

    /// A portal's words with escape sequences, bidi overrides, tabs and line
    /// breaks, and an address that is none: cleaned, bounded, dropped.
    @Test func aHostilePortalsWordsReachTheTerminalCleaned() throws {
        let hostile = "\u{1B}]0;owned\u{07}V1.18\t\u{202E}evil\r\nfamily\tnone" + String(repeating: "x", count: 300)
        let pages = try ScriptedPages([
            "/": [["status": 302, "headers": ["Location": "/srun_portal_pc?ac_id=9&theme=pro"]]],
            "/srun_portal_pc": [["raw": "<input name=\"ac_id\" value=\"9\">ip : \"10.1.2.3\u{1B}[31m\""]],
            "/cgi-bin/rad_user_info": [["json": ["error": "not_online_error", "client_ip": "1.2.3.4\u{1B}[2J", "srun_ver": hostile]]],
        ])
        let (facts, status, output) = try Self.discover([pages.url])
        #expect(status == 0, "\(output)")
        #expect(!output.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\t" && $0 != "\n") || $0 == "\u{202E}" || $0 == "\u{7F}" },
                "no control character: \(output.debugDescription)")
        #expect(facts.filter { $0.0 == "family" }.count == 1, "a value never starts a line of its own: \(output)")
        let version = try #require(facts.first { $0.0 == "srun_ver" }?.1)
        #expect(version.count <= 64 && version.contains("V1.18"), "\(version)")
        #expect(!facts.contains { $0.0 == "client_ip" }, "an address that is none is dropped: \(output)")
        #expect(facts.first { $0.0 == "ac_id" }?.1 == "9")
    }
}
