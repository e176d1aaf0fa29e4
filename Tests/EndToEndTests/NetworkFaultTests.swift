import Foundation
import TestSupport
import Testing

/// Real network faults between two test hosts in network namespaces (see
/// `TestNetwork`): the bound interface going down, the far end of the link going away, a
/// name that stops resolving, the client's address changing mid-session.
/// The daemon shows `failing` or `no-network`, never a credentials or trust
/// alert, and comes back online by itself each time.
@Suite(.serialized, .desktopBudget) struct NetworkFaultTests {
    @Test func theDaemonRidesOutRealNetworkFaults() async throws {
        let network = try TestNetwork()
        let rig = try await Rig(network)
        var lineCount: Int { rig.log.split(separator: "\n").count }
        func stateSeen(after marker: Int, _ states: [String], within seconds: Int64) async -> Bool {
            await eventually(timeout: .seconds(seconds)) {
                let lines = rig.log.split(separator: "\n").dropFirst(marker)
                return states.contains { lines.contains(Substring("ccrelay: state: " + $0)) }
            }
        }
        /// One fault: `cause` shows as trouble, and after `heal` the daemon is online again by itself.
        func fault(_ what: String, cause: () async throws -> Void, heal: () throws -> Void) async throws {
            var marker = lineCount
            try await cause()
            #expect(await stateSeen(after: marker, ["failing", "no-network", "logging-in"], within: 30),
                    "\(what) shows as trouble: \(rig.log)")
            marker = lineCount
            try heal()
            #expect(await stateSeen(after: marker, ["online"], within: 40), "online again after \(what): \(rig.log)")
        }
        #expect(await eventually(timeout: .seconds(30)) { rig.log.contains("state: online") }, "\(rig.log)")

        try await fault("the bound interface going down") {
            try network.ip(["-n", network.client, "link", "set", network.clientInterface, "down"])
        } heal: {
            try network.ip(["-n", network.client, "link", "set", network.clientInterface, "up"])
        }
        // The server's side of the link goes away: nothing answers on the network.
        try await fault("an unreachable network") {
            try network.ip(["-n", network.server, "link", "set", network.serverInterface, "down"])
        } heal: {
            try network.ip(["-n", network.server, "link", "set", network.serverInterface, "up"])
        }
        // The name stops resolving while the connection breaks (a new one needs the name).
        try await fault("a name that does not resolve") {
            try network.resolves(false)
            try await network.forward(toLoopbackPort: rig.simulatorPort)
        } heal: {
            try network.resolves(true)
        }

        // The client's address changes mid-session: the kept connection is dead.
        let marker = lineCount
        try network.ip(["-n", network.client, "addr", "del", TestNetwork.clientAddress + "/24", "dev", network.clientInterface])
        try network.ip(["-n", network.client, "addr", "add", "10.231.0.3/24", "dev", network.clientInterface])
        #expect(await stateSeen(after: marker, ["online"], within: 40), "online again after an address change: \(rig.log)")
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
