import Foundation
import TestSupport
import Testing

/// Network changes without NetworkManager (issue 24): the system service in
/// a network namespace of the test's own (`TestNetwork`), no NetworkManager
/// on its private system bus, its link and routes changed with iproute2.
/// In `NetworkFaultTests`' suite, which runs one test at a time: the test
/// network's names and addresses are one per process.
extension NetworkFaultTests {
    @Test func theLinkAndTheRoutesAreFollowedThroughNetlink() async throws {
        let network = try TestNetwork()
        let pki = TestPKI.shared
        let sim = try CCSimProcess(["--interval", "10", "--timeout", "40", "--tls-cert", pki.netServerCertificate, "--tls-key", pki.netServerKey],
                                   launcher: network.inside(network.server))
        try await network.forward(toLoopbackPort: Int(sim.url.split(separator: ":").last!.filter(\.isNumber))!)
        // A socket file, not an abstract one: the daemon in the client namespace reaches it.
        let socket = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-sysbus-\(UUID().uuidString.prefix(8)).sock").path
        let bus = try PrivateBus(socketPath: socket, systemPolicy: SystemServiceTests.packaging + "/io.github.ccrelay.CCRelay.system.conf")
        let service = try SystemServiceTests.Service(bus: bus)
        try service.write(config: """
            [server]
            url = \(network.url)
            ca-file = \(pki.caCertificate)
            interface = \(network.clientInterface)
            [probe]
            mode = off
            [auth]
            certificate = \(pki.clientCertificate)
            key = \(pki.clientKey)
            """)
        let daemon = try service.start(launcher: network.inside(network.client))
        defer { daemon.stop() }
        #expect(await eventually(timeout: .seconds(30)) { (try? service.state()) == "online" }, "\(service.log)")
        #expect(service.log.contains("following network changes through netlink"), "\(service.log)")

        // The bound link goes down: no-network within a second (no keep-alive has to fail first).
        try network.ip(["-n", network.client, "link", "set", network.clientInterface, "down"])
        let down = ContinuousClock.now
        #expect(await eventually(timeout: .seconds(5), interval: .milliseconds(20)) { (try? service.state()) == "no-network" }, "\(service.log)")
        let noticed = ContinuousClock.now - down
        #expect(noticed < .seconds(2), "noticed after \(noticed)")
        try network.ip(["-n", network.client, "link", "set", network.clientInterface, "up"])
        #expect(await eventually(timeout: .seconds(20)) { (try? service.state()) == "online" }, "\(service.log)")
        // The timeline says which link went down, and who saw it.
        let timeline = try service.cli(["timeline"]).standardOutput
        #expect(timeline.contains("online → no-network  the network went down: \(network.clientInterface)'s link went down (netlink)"), "\(timeline)")

        // A new default route: a keep-alive at once, on a fresh connection.
        func reports() -> Int { ((try? sim.sessions()) ?? []).flatMap { ($0["reports"] as? [[String: Any]]) ?? [] }.count }
        func localPorts() throws -> Set<String> {
            let listed = try run("/usr/sbin/ip", ["netns", "exec", network.client, "ss", "-Htn", "state", "established"])
            return Set(listed.standardOutput.split(separator: "\n").compactMap { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst(2).first.map(String.init) })
        }
        #expect(await eventually(timeout: .seconds(15)) { reports() >= 2 }, "a keep-alive on the first connection")
        let before = (reports(), try localPorts())
        try network.ip(["-n", network.client, "route", "add", "default", "via", TestNetwork.serverAddress, "dev", network.clientInterface])
        #expect(await eventually(timeout: .seconds(3)) { reports() > before.0 }, "a keep-alive at once, not at the next interval")
        #expect(await eventually(timeout: .seconds(3)) { (try? localPorts()).map { !$0.isEmpty && $0.isDisjoint(with: before.1) } == true },
                "a fresh connection: \(before.1) → \((try? localPorts()) ?? [])")

        // A burst of 50 address changes: one look, a bounded number of wake-ups.
        func switches() throws -> Int {
            let status = try String(contentsOfFile: "/proc/\(daemon.pid)/status", encoding: .utf8)
            return status.split(separator: "\n").filter { $0.contains("ctxt_switches") }
                .compactMap { Int($0.split(separator: "\t").last ?? "") }.reduce(0, +)
        }
        let batch = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-burst-\(UUID().uuidString)").path
        try (1...50).map { "addr add 10.232.0.\($0)/32 dev \(network.clientInterface)" }.joined(separator: "\n")
            .write(toFile: batch, atomically: true, encoding: .utf8)
        defer { unlink(batch) }
        let reportsBefore = reports()
        let switchesBefore = try switches()
        try network.ip(["-n", network.client, "-batch", batch])
        try await Task.sleep(for: .seconds(1))
        let woke = try switches() - switchesBefore
        let keepAlives = reports() - reportsBefore
        // Each keep-alive that fell in the second costs about 2; the burst itself 2 (the socket, the timer).
        #expect(woke <= 4 + 3 * keepAlives, "\(woke) context switches for 50 address changes (\(keepAlives) keep-alives meanwhile)")
        #expect(try service.state() == "online", "addresses added change nothing")
        print("route watch: the link down noticed after \(noticed); \(woke) context switches for 50 address changes")
        withExtendedLifetime(bus) {}
    }
}
