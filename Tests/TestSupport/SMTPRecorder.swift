import Foundation

/// A loopback mail server (Tests/Fixtures/smtp_recorder.py, aiosmtpd) that
/// takes mail over TLS after AUTH only and records each message as Python's
/// email package parses it.
public final class SMTPRecorder: Sendable {
    private let process: ChildProcess
    public let port: Int
    private let record: String

    /// `tls`: "implicit" (as 465) or "starttls" (required, as 587); the test PKI's 127.0.0.1 certificate.
    /// `hangFirst` messages are taken and never answered.
    public init(tls: String, user: String, password: String, tempfailFirst: Int = 0, hangFirst: Int = 0, rejectFirst: Int = 0) throws {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures").path
        record = FileManager.default.temporaryDirectory.appendingPathComponent("smtp-\(UUID().uuidString).jsonl").path
        _ = FileManager.default.createFile(atPath: record, contents: nil)
        process = try ChildProcess("/usr/bin/python3", [
            fixtures + "/smtp_recorder.py", "--record", record, "--tls", tls, "--cert", TestPKI.shared.serverCertificate,
            "--key", TestPKI.shared.serverKey, "--user", user, "--password", password, "--tempfail-first", "\(tempfailFirst)", "--hang-first", "\(hangFirst)",
            "--reject-first", "\(rejectFirst)",
        ])
        guard let line = process.readLine(), line.hasPrefix("port="), let bound = Int(line.dropFirst(5)) else {
            throw TestSetupError("the SMTP recorder did not start")
        }
        port = bound
    }

    /// Every message so far, oldest first: envelope, decoded subject, from, to, date, message_id, text, tls, answered.
    public func messages() -> [[String: Any]] {
        let text = (try? String(contentsOfFile: record, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    deinit {
        process.stop()
        try? FileManager.default.removeItem(atPath: record)
    }
}
