import Foundation

/// A real TLS server that is not ccsim: `openssl s_server`, which refuses a
/// client certificate in the handshake with the TLS alert OpenSSL's verifier
/// chose (unknown CA, expired, not yet valid, none presented), as mutual-TLS
/// servers in front of real campus systems do. Or, without `clientCA`, a
/// server whose own certificate the client should not trust. Stopped when released.
public final class TLSServerProcess: Sendable {
    private let process: ChildProcess
    public let url: String

    public init(certificate: String, key: String, clientCA: String? = nil, tls13: Bool = true) async throws {
        // A free port may be taken by another test before s_server binds it (it then exits): another port, a few times.
        for _ in 0..<5 {
            let port = try freeLoopbackPort()
            var arguments = ["s_server", "-accept", "127.0.0.1:\(port)", "-cert", certificate, "-key", key, "-www", "-quiet",
                             tls13 ? "-tls1_3" : "-tls1_2"]
            if let clientCA { arguments += ["-CAfile", clientCA, "-Verify", "1", "-verify_return_error"] }
            let started = try ChildProcess("/usr/bin/openssl", arguments)
            // Waited for without blocking a thread of the (2-thread) concurrency pool.
            _ = await eventually(timeout: .seconds(30)) { canConnect(port) || !started.isRunning }
            if started.isRunning && canConnect(port) {
                process = started
                url = "https://127.0.0.1:\(port)/"
                return
            }
            started.stop()
        }
        throw TestSetupError("openssl s_server did not start")
    }

    deinit { process.stop() }
}

/// A TCP port on 127.0.0.1 that nothing listens on now.
public func freeLoopbackPort() throws -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
            bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
        }
    }
    guard bound else { throw TestSetupError("no free port") }
    return UInt16(bigEndian: address.sin_port)
}

/// True when something accepts TCP connections on 127.0.0.1:`port`.
func canConnect(_ port: UInt16) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
}
