import DBus
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

    /// NetworkManager's `Connectivity` (python3-dbusmock): a portal it finds
    /// names the way out the probe saw blocked, and a resume asks it to check
    /// (`CheckConnectivity`) along with the probe.
    @Test func networkManagerIsAskedAfterAResumeAndThePortalItFindsIsShown() async throws {
        let system = try PrivateBus()
        let nm = try await MockSystemService(template: "networkmanager", name: "org.freedesktop.NetworkManager", on: system)
        let logind = try await MockSystemService(template: "logind", name: "org.freedesktop.login1", on: system)
        let manager: ObjectPath = "/org/freedesktop/NetworkManager"
        let server = try OutsideProbeServer()
        let rig = try await DaemonRig(extraConfig: "[probe]\nmode = auto\nurls = \(server.v4("status-503"))", systemBus: system)
        #expect(await eventually(timeout: .seconds(20)) { status(rig)["outside"] as? String == "limited" }, "\(status(rig))\n\(rig.log)")
        try await nm.call("org.freedesktop.NetworkManager", manager, "org.freedesktop.DBus.Mock", "SetConnectivity", [.uint32(2)])
        #expect(await eventually(timeout: .seconds(20)) { status(rig)["outside"] as? String == "portal" }, "\(status(rig))\n\(rig.log)")
        #expect(status(rig)["state"] as? String == "online", "a portal never ends the session")
        func checksAsked() async throws -> Int {
            let reply = try await nm.call("org.freedesktop.NetworkManager", manager, "org.freedesktop.DBus.Mock", "GetCalls")
            guard case .array(_, let calls)? = reply.body.first else { return -1 }
            return calls.filter { if case .structure(let fields) = $0, fields.count > 1, case .string("CheckConnectivity") = fields[1] { true } else { false } }.count
        }
        try await nm.call("org.freedesktop.NetworkManager", manager, "org.freedesktop.DBus.Mock", "ClearCalls")
        for starting in [true, false] {
            try await logind.call("org.freedesktop.login1", "/org/freedesktop/login1", "org.freedesktop.DBus.Mock", "EmitSignal",
                                  [.string("org.freedesktop.login1.Manager"), .string("PrepareForSleep"), .signature("b"),
                                   .array(element: "v", [.variant(.boolean(starting))])])
            if starting { #expect(await eventually { rig.log.contains("state: sleeping") }, "\(rig.log)") }
        }
        #expect(await eventually(timeout: .seconds(20)) { (try? await checksAsked()) ?? 0 >= 1 }, "CheckConnectivity after the resume: \(rig.log)")
        let timeline = try rig.cli(["timeline", "--json"]).standardOutput
        #expect(timeline.contains("NetworkManager: portal"), "the timeline says who found the portal: \(timeline)")
    }
}
