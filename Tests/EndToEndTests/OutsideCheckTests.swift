import Foundation
import TestSupport
import Testing

/// Outside access end to end (issue 25): the real daemon, ccsim, and the
/// loopback probe server standing in for the generate_204 endpoints.
@Suite(.desktopBudget) struct OutsideCheckTests {
    func status(_ rig: DaemonRig) -> [String: Any] {
        let output = (try? rig.cli(["status", "--json"]).standardOutput) ?? ""
        return (try? JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any]) ?? [:]
    }

    @Test(arguments: [("generate_204", "ok"), ("redirect", "portal"), ("status-503", "limited")])
    func aGrantedSessionSaysWhetherTrafficGetsOut(_ path: String, _ verdict: String) async throws {
        let server = try OutsideProbeServer()
        let rig = try await DaemonRig(extraConfig: "[probe]\nmode = auto\nurls = \(server.v4(path))")
        #expect(await eventually(timeout: .seconds(20)) { status(rig)["outside"] as? String == verdict }, "\(status(rig))\n\(rig.log)")
        let shown = status(rig)
        #expect(shown["state"] as? String == "online", "the session is the server's word, whatever the probe says")
        #expect(shown["outside6"] as? String == "limited", "IPv6 cannot reach 127.0.0.1: \(shown)")
        #expect(shown["outside_checked"] is String)
        let human = try rig.cli(["status"]).standardOutput
        #expect(human.contains("outside") && human.contains("IPv4"), "\(human)")
    }
}
