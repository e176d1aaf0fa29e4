import Foundation
import TestSupport
import Testing

/// Real network faults between two test hosts in network namespaces (see
/// `TestNetwork`): the bound interface going down, the far end of the link going away, a
/// name that stops resolving, the client's address changing mid-session.
/// The daemon shows `failing` or `no-network`, never a credentials or trust
/// alert, and comes back online by itself each time.
@Suite(.serialized) struct NetworkFaultTests {
    @Test func theDaemonRidesOutRealNetworkFaults() async throws {
        let network = try TestNetwork()
        let rig = try await Rig(network)
        func onlineAgain(after marker: Int, _ what: String) async {
            let back = await eventually(timeout: .seconds(40)) {
                rig.log.split(separator: "\n").dropFirst(marker).contains("ccrelay: state: online")
            }
            #expect(back, "online again after \(what): \(rig.log)")
        }
        func trouble(after marker: Int, _ what: String) async {
            let seen = await eventually(timeout: .seconds(30)) {
                let lines = rig.log.split(separator: "\n").dropFirst(marker)
                return lines.contains("ccrelay: state: failing") || lines.contains("ccrelay: state: no-network")
                    || lines.contains("ccrelay: state: logging-in")
            }
            #expect(seen, "\(what) shows as trouble: \(rig.log)")
        }
        var marker: Int { rig.log.split(separator: "\n").count }
        #expect(await eventually(timeout: .seconds(30)) { rig.log.contains("state: online") }, "\(rig.log)")

        // The bound interface goes down and comes back.
        var start = marker
        try network.ip(["-n", network.client, "link", "set", network.clientInterface, "down"])
        await trouble(after: start, "the interface going down")
        start = marker
        try network.ip(["-n", network.client, "link", "set", network.clientInterface, "up"])
        await onlineAgain(after: start, "the interface came back")

        // The server's side of the link goes away: nothing answers on the network.
        start = marker
        try network.ip(["-n", network.server, "link", "set", network.serverInterface, "down"])
        await trouble(after: start, "an unreachable network")
        start = marker
        try network.ip(["-n", network.server, "link", "set", network.serverInterface, "up"])
        await onlineAgain(after: start, "the route came back")

        // The name stops resolving while the connection breaks (a new one needs the name).
        start = marker
        try network.resolves(false)
        try await network.forward(toLoopbackPort: rig.simulatorPort)
        await trouble(after: start, "a name that does not resolve")
        start = marker
        try network.resolves(true)
        await onlineAgain(after: start, "the name resolves again")

        // The client's address changes mid-session: the kept connection is dead.
        start = marker
        try network.ip(["-n", network.client, "addr", "del", TestNetwork.clientAddress + "/24", "dev", network.clientInterface])
        try network.ip(["-n", network.client, "addr", "add", "10.231.0.3/24", "dev", network.clientInterface])
        await onlineAgain(after: start, "an address change")
        #expect(await eventually(timeout: .seconds(20)) {
            ((try? rig.rig.sim.sessions()) ?? []).flatMap { ($0["reports"] as? [[String: Any]]) ?? [] }.count >= 4
        })

        let shown = try rig.rig.shown()
        #expect(!shown.contains("x-ccrelay.auth") && !shown.contains("x-ccrelay.trust"), "never a credentials or trust alert: \(shown)")
        #expect(rig.rig.daemon.isRunning)
    }

    /// The daemon in the client namespace against ccsim in the server one.
    struct Rig {
        let rig: DaemonRig
        let simulatorPort: Int
        var log: String { rig.log }

        init(_ network: TestNetwork) async throws {
            let pki = TestPKI.shared
            let socket = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-netns-\(UUID().uuidString).sock").path
            rig = try await DaemonRig(
                extraConfig: "[server]\ninterface = \(network.clientInterface)",
                simulator: ["--interval", "2", "--timeout", "12", "--tls-cert", pki.netServerCertificate, "--tls-key", pki.netServerKey],
                busSocket: socket, serverURL: network.url, launcher: network.inside(network.client),
                simulatorLauncher: network.inside(network.server)) { _ in }
            simulatorPort = Int(rig.sim.url.split(separator: ":").last!.filter(\.isNumber))!
            try await network.forward(toLoopbackPort: simulatorPort)
        }
    }
}
