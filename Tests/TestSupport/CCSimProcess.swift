import Foundation

/// A running `ccsim` (the built simulator), stopped when released.
public final class CCSimProcess: Sendable {
    private let process: ChildProcess
    /// The CC/1 base URL, such as `https://127.0.0.1:41234/`.
    public let url: String
    /// The control API base, such as `http://127.0.0.1:41235/control/`.
    public let controlURL: String

    /// Runs the control API's curl (inside the simulator's network namespace, for one).
    private let launcher: [String]

    /// Starts ccsim with `arguments`; with `tls`, over HTTPS with the test PKI's
    /// server certificate, requiring client certificates from its CA unless
    /// `clientCertificates` is false. `launcher` runs it (and the control
    /// calls) through a command, such as `ip netns exec NAME`.
    public convenience init(tls: Bool = true, clientCertificates: Bool = true, _ arguments: [String] = [], launcher: [String] = []) throws {
        let pki = TestPKI.shared
        let tlsArguments = !tls ? [] : ["--tls-cert", pki.serverCertificate, "--tls-key", pki.serverKey]
            + (clientCertificates ? ["--client-ca", pki.caCertificate] : [])
        let executable = buildProductsDirectory.appendingPathComponent("ccsim").path
        try self.init(command: launcher + [executable] + tlsArguments + arguments, launcher: launcher)
    }

    /// Starts ccsim as `command` says (a launcher, the program, all its
    /// arguments), such as a ccsim inside a desktop's chroot; its control
    /// API is called with curl through `launcher`.
    public init(command: [String], launcher: [String] = []) throws {
        self.launcher = launcher
        process = try ChildProcess(command[0], Array(command.dropFirst()))
        guard let first = process.readLine(), first.hasPrefix("url="), let second = process.readLine(),
            second.hasPrefix("control=")
        else {
            let error = String(decoding: process.standardError?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
            throw TestSetupError("ccsim did not start: \(error)")
        }
        url = String(first.dropFirst(4))
        controlURL = String(second.dropFirst(8))
    }

    /// Calls the control API with curl; returns the decoded JSON answer.
    @discardableResult
    public func control(_ method: String, _ path: String, _ body: Any? = nil) throws -> Any {
        var arguments = ["-sS", "--noproxy", "*", "-X", method, controlURL + path]
        if let body {
            arguments += ["-H", "Content-Type: application/json",
                          "-d", String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)]
        }
        let command = launcher + ["/usr/bin/curl"] + arguments
        let result = try run(command[0], Array(command.dropFirst()))
        guard result.status == 0 else { throw TestSetupError("control \(path): \(result.standardError)") }
        return try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8), options: [.fragmentsAllowed])
    }

    /// The sessions as the simulator saw them.
    public func sessions() throws -> [[String: Any]] {
        try control("GET", "sessions") as? [[String: Any]] ?? []
    }

    /// TCP connections accepted on the CC/1 port so far.
    public func connections() throws -> Int {
        (try control("GET", "stats") as? [String: Any])?["connections"] as? Int ?? -1
    }

    public func stop() { process.stop() }
}

extension CCSimProcess {
    /// A configuration for this simulator over mutual TLS with the test PKI's
    /// client certificate, no outside-access probe (no test asks the internet), then `extra` lines.
    public func configuration(extra: String = "") -> String {
        let pki = TestPKI.shared
        return """
            [server]
            url = \(url)
            ca-file = \(pki.caCertificate)
            [probe]
            mode = off
            [auth]
            certificate = \(pki.clientCertificate)
            key = \(pki.clientKey)
            \(extra)
            """
    }
}
