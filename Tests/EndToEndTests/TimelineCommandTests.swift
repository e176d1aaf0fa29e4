import Foundation
import TestSupport
import Testing

/// `ccrelay timeline` end to end (issue 25): the real daemon records why its
/// state changed, and the command answers "why did it drop?".
@Suite(.desktopBudget) struct TimelineCommandTests {
    @Test func aKickIsInTheTimelineWithItsCauseAndCountedAsADrop() async throws {
        let rig = try await DaemonRig(extraConfig: "[keepalive]\nauto-relogin = false")
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        try rig.sim.control("POST", "kick", ["message": "下线"])
        #expect(await eventually(timeout: .seconds(20)) { rig.log.contains("state: logged-out") }, "\(rig.log)")
        let result = try rig.cli(["timeline", "--json", "--since", "1h"])
        #expect(result.status == 0, "\(result.standardError)")
        let object = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
        let entries = (object?["entries"] as? [[String: Any]]) ?? []
        let changes = entries.map { "\($0["from"] as? String ?? "")→\($0["to"] as? String ?? ""): \($0["cause"] as? String ?? "")" }
        #expect(changes.contains("online→logged-out: the server ended the session (kicked)"), "\(changes)")
        #expect(changes.contains("logging-in→online: login: granted"), "\(changes)")
        let summary = object?["summary"] as? [String: Any]
        let drops = (summary?["drops"] as? [[String: Any]]) ?? []
        #expect(drops.first?["cause"] as? String == "the server ended the session (kicked)" && drops.first?["count"] as? Int == 1, "\(drops)")
        #expect(((summary?["online_share"] as? Double) ?? 0) > 0)
        let recorded = (summary?["recorded_seconds"] as? Double) ?? -1
        #expect(recorded >= 0 && recorded < 600, "the daemon of this test has run for seconds: \(recorded)")
        let human = try rig.cli(["timeline"]).standardOutput
        #expect(human.contains("online → logged-out  the server ended the session (kicked)") && human.contains("1 drop: 1 the server ended"),
                "\(human)")
        #expect(human.contains(" s on record in the last 7d"), "a share of the seconds on record, not of a week: \(human)")
        #expect(try rig.cli(["timeline", "--since", "forever"]).status == 2)
    }
}
