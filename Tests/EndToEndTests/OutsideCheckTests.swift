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

/// In `NetworkFaultTests`' serialized suite: the test network's names are one per process.
extension NetworkFaultTests {
    /// The way out is cut while the CC server still grants the session: the
    /// check says `limited` with the kind of failure; the session stays online, no relogin.
    @Test func aCutWayOutWhileTheSessionIsGrantedIsLimitedNotARelogin() async throws {
        let network = try TestNetwork()
        // The probe endpoint on an address of its own behind the server, reached through one route the test removes.
        let probeAddress = "10.231.1.1"
        try network.ip(["-n", network.server, "addr", "add", probeAddress + "/32", "dev", network.serverInterface])
        try network.ip(["-n", network.client, "route", "add", probeAddress, "via", TestNetwork.serverAddress, "dev", network.clientInterface])
        let probe = try OutsideProbeServer(address: probeAddress, launcher: network.inside(network.server))
        let pki = TestPKI.shared
        let socket = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-netns-\(UUID().uuidString).sock").path
        let rig = try await DaemonRig(
            extraConfig: "[server]\ninterface = \(network.clientInterface)\n[probe]\nmode = auto\nurls = http://\(probeAddress):\(probe.port)/generate_204",
            simulator: ["--interval", "2", "--timeout", "12", "--tls-cert", pki.netServerCertificate, "--tls-key", pki.netServerKey],
            busSocket: socket, serverURL: network.url, launcher: network.inside(network.client),
            simulatorLauncher: network.inside(network.server)) { _ in }
        try await network.forward(toLoopbackPort: Int(rig.sim.url.split(separator: ":").last!.filter(\.isNumber))!)
        func status() -> [String: Any] {
            let output = (try? rig.cli(["status", "--json"]).standardOutput) ?? ""
            return (try? JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any]) ?? [:]
        }
        #expect(await eventually(timeout: .seconds(30)) { status()["outside"] as? String == "ok" }, "\(status())\n\(rig.log)")
        // Cut the way out beyond the campus (the endpoint's address is gone: nothing answers);
        // the link's going down and up (a network change) calls for a check.
        try network.ip(["-n", network.server, "addr", "del", probeAddress + "/32", "dev", network.serverInterface])
        try network.ip(["-n", network.client, "link", "set", network.clientInterface, "down"])
        #expect(await eventually(timeout: .seconds(30)) { status()["state"] as? String != "online" }, "\(rig.log)")
        try network.ip(["-n", network.client, "link", "set", network.clientInterface, "up"])
        #expect(await eventually(timeout: .seconds(40)) { status()["outside"] as? String == "limited" }, "\(status())\n\(rig.log)")
        #expect(status()["state"] as? String == "online", "the session is the server's word")
        #expect(try rig.sim.sessions().count == 1, "no relogin for a cut way out")
        let timeline = try rig.cli(["timeline"]).standardOutput
        // (Leaving online, even for a second, forgets the verdict: the check after it starts from unknown.)
        #expect(timeline.contains("outside unknown → limited") && timeline.contains("IPv4 \(probeAddress):\(probe.port): timeout"), "\(timeline)")
    }
}
