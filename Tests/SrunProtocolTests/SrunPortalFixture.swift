import EventLoop
import Foundation
import TestSupport

/// A scripted loopback Srun portal (Tests/Fixtures/srun_portal.py): each
/// path answers from its list in turn, every request is recorded; with a
/// token it checks the login's chksum as a portal does.
final class SrunPortalFixture: Sendable {
    private let process: ChildProcess
    let port: Int
    let address: String
    private let record: String
    private let script: String

    /// `script` maps a path to its answers (see the fixture's header); `tls`
    /// serves the test PKI's 127.0.0.1 certificate; `address` is where it listens.
    init(_ answers: [String: [[String: Any]]], token: String? = nil, tls: Bool = false, address: String = "127.0.0.1") throws {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures").path
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("srun-\(UUID().uuidString)").path
        record = base + ".jsonl"
        script = base + ".json"
        try JSONSerialization.data(withJSONObject: answers).write(to: URL(fileURLWithPath: script))
        _ = FileManager.default.createFile(atPath: record, contents: nil)
        var arguments = [fixtures + "/srun_portal.py", "--script", script, "--record", record, "--address", address]
        if let token { arguments += ["--token", token] }
        if tls { arguments += ["--cert", TestPKI.shared.serverCertificate, "--key", TestPKI.shared.serverKey] }
        process = try ChildProcess("/usr/bin/python3", arguments)
        guard let line = process.readLine(), line.hasPrefix("port="), let port = Int(line.dropFirst(5)) else {
            throw TestSetupError("the Srun portal fixture did not start")
        }
        self.port = port
        self.address = address
    }

    var url: String { "http://\(address):\(port)/" }

    /// An IPv4 address of this computer that is not a loopback one, when it has one.
    static var nonLoopbackAddress: String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return nil }
        defer { freeifaddrs(list) }
        var entry = list
        while let current = entry {
            defer { entry = current.pointee.ifa_next }
            guard let address = current.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET) else { continue }
            let ipv4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
            guard UInt32(bigEndian: ipv4.s_addr) >> 24 != 127 else { continue }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            var copy = ipv4
            guard inet_ntop(AF_INET, &copy, &text, socklen_t(text.count)) != nil else { continue }
            return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return nil
    }

    /// Every request so far, oldest first: path, query (decoded), raw (the query as sent), headers, port.
    func requests() -> [[String: Any]] {
        let text = (try? String(contentsOfFile: record, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// The decoded queries of the requests to `path`.
    func queries(_ path: String) -> [[String: String]] {
        requests().filter { $0["path"] as? String == path }.map { $0["query"] as? [String: String] ?? [:] }
    }

    deinit {
        process.stop()
        try? FileManager.default.removeItem(atPath: record)
        try? FileManager.default.removeItem(atPath: script)
    }
}

/// Runs `work` on the tests' loop and waits for the completion it is given.
func onLoop<T: Sendable>(_ work: @escaping @Sendable (@escaping (T) -> Void) throws -> Void) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        TestLoop.shared.execute {
            do { try work { continuation.resume(returning: $0) } } catch { continuation.resume(throwing: error) }
        }
    }
}
