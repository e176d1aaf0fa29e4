import Foundation
import TestSupport
import Testing

/// The README's first command: the scripted demo, headless (a private bus
/// and the terminal sink), its transcript checked step by step; Ctrl-C leaves
/// nothing behind.
@Suite(.desktopBudget) struct DemoTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/ccrelay-demo").path
    /// No session bus to find: the demo brings its own.
    static let environment = ["CCRELAY_DEMO_BIN": buildProductsDirectory.path,
                              "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/ccrelay-demo-test", "LANG": "C.UTF-8"]

    @Test func theScenarioRunsEveryStepAndCleansUp() throws {
        let result = try run(Self.script, [], environment: Self.environment)
        let transcript = result.standardOutput
        #expect(result.status == 0, "\(transcript)\n\(result.standardError)")
        let expected = [
            "a private bus and a terminal sink print each bubble",
            "== 3. Starting the ccrelay daemon", "$ ccrelay status → online",
            "== 5. The campus sends a notice", "│ 网络维护通知 Network maintenance", "badge 1",
            "== 6. The server stops answering", "│ Keep-alive failed", "$ ccrelay status → failing",
            "== 7. The server answers again", "│ Back online", "── bubble 2 closed",
            "== 8. The server kicks the session", "│ Logged out of the campus network", "$ ccrelay status → logged-out, badge 3",
            "$ ccrelay badge → 3 unread alerts", "$ ccrelay badge clear → Cleared the badge: 3 alerts acknowledged.",
            "$ ccrelay status → logged-out, badge 0", "== done",
        ]
        var rest = Substring(transcript)
        for line in expected {
            guard let found = rest.range(of: line) else {
                Issue.record("missing, or out of order: '\(line)'\n\(transcript)")
                break
            }
            rest = rest[found.upperBound...]
        }
        let directory = try #require(transcript.firstMatch(of: /working in (\S+)/)?.1)
        #expect(!FileManager.default.fileExists(atPath: String(directory)), "the temporary directory is removed")
    }

    @Test func ctrlCStopsEverythingAndLeavesNothingRunning() async throws {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-demo-\(UUID().uuidString)").path
        let demo = try ChildProcess(Self.script, [], environment: Self.environment, outputFiles: (output, output + ".err"))
        func transcript() -> String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }
        #expect(await eventually(timeout: .seconds(30)) { transcript().contains("== 4.") }, "\(transcript())")
        let directory = try #require(transcript().firstMatch(of: /working in (\S+)/)?.1).description
        kill(demo.pid, SIGINT)
        #expect(demo.wait() == 130)
        #expect(transcript().contains("== stopped"))
        #expect(!FileManager.default.fileExists(atPath: directory), "the temporary directory is removed")
        // No process still runs with the demo's directory on its command line (ccsim, the daemon, the bus).
        let left = try run("/usr/bin/pgrep", ["-f", directory])
        #expect(left.standardOutput.isEmpty, "still running: \(left.standardOutput)")
    }
}
