import Foundation

/// The loopback stand-in for the generate_204 endpoints a daemon probes
/// (Tests/Fixtures/probe_server.py): answers by path on 127.0.0.1 and
/// [::1], the same port — 204, a page, a redirect, 503, a hang, a reset.
public final class OutsideProbeServer: Sendable {
    private let process: ChildProcess
    public let port: Int

    /// IPv4 on `address` (127.0.0.1 unless given), in the network namespace `launcher` enters (none: this one).
    public init(address: String? = nil, launcher: [String] = []) throws {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures").path
        let command = launcher + ["/usr/bin/python3", fixtures + "/probe_server.py"] + (address.map { [$0] } ?? [])
        process = try ChildProcess(command[0], Array(command.dropFirst()))
        guard let line = process.readLine(), line.hasPrefix("port="), let port = Int(line.dropFirst(5)) else {
            throw TestSetupError("the probe server did not start")
        }
        self.port = port
    }

    /// The URL of `path` over IPv4, and over IPv6.
    public func v4(_ path: String) -> String { "http://127.0.0.1:\(port)/\(path)" }
    public func v6(_ path: String) -> String { "http://[::1]:\(port)/\(path)" }
}
