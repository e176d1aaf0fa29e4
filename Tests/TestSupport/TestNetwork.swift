import Foundation

/// Two test hosts in network namespaces of our own (root, iproute2), joined
/// by a veth pair on 10.231.0.0/24: the server side (10.231.0.1, where a
/// socat forwards port 8443 to a ccsim on that namespace's loopback) and
/// the client side (10.231.0.2, interface `clientInterface`, where the
/// daemon runs, resolving `ccsim.test` through its own /etc/netns hosts
/// file). Nothing leaves the machine, and the machine's own namespace sees
/// no link come or go. Removed when released. One at a time
/// in a process (its names and addresses are fixed): the tests that use it
/// are in one serialized suite.
public final class TestNetwork: Sendable {
    public let server: String
    public let client: String
    public let clientInterface: String
    public let serverInterface: String
    public static let serverAddress = "10.231.0.1"
    public static let clientAddress = "10.231.0.2"
    public static let hostName = "ccsim.test"
    public static let port = 8443
    private let etc: String
    private let forwarder: LockedBox<ChildProcess?> = LockedBox(nil)

    public var url: String { "https://\(Self.hostName):\(Self.port)/" }
    /// Runs a command inside the namespace.
    public func inside(_ namespace: String) -> [String] { ["/usr/sbin/ip", "netns", "exec", namespace] }

    public init() throws {
        let tag = "\(getpid() % 100_000)"
        server = "ccrs\(tag)"
        client = "ccrc\(tag)"
        serverInterface = "ccvs\(tag)"
        clientInterface = "ccvc\(tag)"
        etc = "/etc/netns/\(client)"
        cleanUp()
        try ip(["netns", "add", server])
        try ip(["netns", "add", client])
        // Made in the namespaces, never in the machine's own: a link added there and moved would be
        // heard by every daemon following netlink (an idle one's wake-up another test counts).
        try ip(["-n", server, "link", "add", serverInterface, "type", "veth", "peer", "name", clientInterface, "netns", client])
        try ip(["-n", server, "addr", "add", Self.serverAddress + "/24", "dev", serverInterface])
        try ip(["-n", client, "addr", "add", Self.clientAddress + "/24", "dev", clientInterface])
        for (namespace, interface) in [(server, serverInterface), (client, clientInterface)] {
            try ip(["-n", namespace, "link", "set", "lo", "up"])
            try ip(["-n", namespace, "link", "set", interface, "up"])
        }
        try waitUntilBothLinksCarry()
        try FileManager.default.createDirectory(atPath: etc, withIntermediateDirectories: true)
        try resolves(true)
        // No name server in the client's namespace: a name not in its hosts file fails at once.
        try "nameserver 127.0.0.1\n".write(toFile: etc + "/resolv.conf", atomically: true, encoding: .utf8)
    }

    deinit {
        forwarder.get()?.stop()
        cleanUp()
    }

    /// Forwards 10.231.0.1:8443 in the server namespace to `port` on its loopback (where ccsim listens).
    public func forward(toLoopbackPort port: Int) async throws {
        // The forwarder and the children it forked for open connections: those connections break.
        forwarder.get()?.stop()
        _ = try? run("/usr/bin/pkill", ["-f", "TCP-LISTEN:\(Self.port),bind=\(Self.serverAddress)"])
        let command = inside(server) + [
            "/usr/bin/socat", "TCP-LISTEN:\(Self.port),bind=\(Self.serverAddress),reuseaddr,fork", "TCP:127.0.0.1:\(port)",
        ]
        forwarder.set(try ChildProcess(command[0], Array(command.dropFirst())))
        let probe = "\(inside(server).joined(separator: " ")) ss -Hltn | grep -q ':\(Self.port) '"
        guard await eventually(timeout: .seconds(5), { (try? run("/bin/sh", ["-c", probe]))?.status == 0 }) else {
            throw TestSetupError("socat did not start listening")
        }
    }

    /// Whether `ccsim.test` resolves in the client namespace (its hosts file).
    public func resolves(_ known: Bool) throws {
        let hosts = "127.0.0.1 localhost\n" + (known ? "\(Self.serverAddress) \(Self.hostName)\n" : "")
        // In place: `ip netns exec` bind-mounted this very file (inode) over /etc/hosts.
        try hosts.write(toFile: etc + "/hosts", atomically: false, encoding: .utf8)
    }

    /// `ip ARGUMENTS`, failing the test setup when it fails.
    public func ip(_ arguments: [String]) throws {
        let result = try run("/usr/sbin/ip", arguments)
        guard result.status == 0 else { throw TestSetupError("ip \(arguments.joined(separator: " ")): \(result.standardError)") }
    }

    /// A veth says "down" (operstate) for up to a second after both ends are up:
    /// a test starts on a network that is there, as a daemon at login finds it.
    private func waitUntilBothLinksCarry() throws {
        for _ in 0..<200 {
            let carrying = try [(server, serverInterface), (client, clientInterface)].allSatisfy { namespace, interface in
                try run("/usr/sbin/ip", ["-n", namespace, "-o", "link", "show", "dev", interface]).standardOutput.contains(" state UP ")
            }
            if carrying { return }
            usleep(50_000)
        }
        throw TestSetupError("the test network's links did not come up within 10 s")
    }

    private func cleanUp() {
        _ = try? run("/usr/sbin/ip", ["netns", "del", server])
        _ = try? run("/usr/sbin/ip", ["netns", "del", client])
        try? FileManager.default.removeItem(atPath: etc)
    }
}
