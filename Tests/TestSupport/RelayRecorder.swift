import Foundation

/// A loopback ntfy, gotify or webhook server, or a push service
/// (Tests/Fixtures/relay_recorder.py), that records every request it
/// receives, answered or not, and why it refused one.
public final class RelayRecorder: Sendable {
    public enum API: String, Sendable, CaseIterable {
        case ntfy, gotify, webhook
        case bark, serverchan, pushplus, wecom, dingtalk, feishu, telegram
    }

    private let process: ChildProcess
    public let port: Int
    public let record: String

    /// Starts it on `port` (0: a free one); `hangFirst` requests are taken and never answered;
    /// with `tls` it serves HTTPS with the test PKI's 127.0.0.1 certificate.
    /// `behave` is one of the recorder's hostile answers (slow-body, endless-body, echo-401), ServerChan's
    /// quota, or normal. A push service takes `token` as its key, `chat` (Telegram), `secret` (DingTalk, Feishu).
    public init(_ api: API, port: Int = 0, token: String = "", chat: String = "", secret: String = "", hangFirst: Int = 0, tls: Bool = false,
                behave: String = "normal") throws {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures").path
        record = FileManager.default.temporaryDirectory.appendingPathComponent("relay-\(UUID().uuidString).jsonl").path
        _ = FileManager.default.createFile(atPath: record, contents: nil)
        var arguments = [fixtures + "/relay_recorder.py", "--api", api.rawValue, "--port", "\(port)", "--record", record,
                         "--token", token, "--chat", chat, "--secret", secret, "--hang-first", "\(hangFirst)", "--behave", behave]
        if tls { arguments += ["--cert", TestPKI.shared.serverCertificate, "--key", TestPKI.shared.serverKey] }
        process = try ChildProcess("/usr/bin/python3", arguments)
        guard let line = process.readLine(), line.hasPrefix("port="), let bound = Int(line.dropFirst(5)) else {
            throw TestSetupError("the relay recorder did not start")
        }
        self.port = bound
    }

    /// Every request so far, oldest first: method, path, query, headers, body, answered.
    public func requests() -> [[String: Any]] { lines().filter { $0["method"] != nil } }

    /// Why a push service refused the requests it refused, oldest first.
    public func problems() -> [String] { lines().compactMap { $0["problem"] as? String } }

    private func lines() -> [[String: Any]] {
        let text = (try? String(contentsOfFile: record, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// A request's JSON body.
    public static func body(_ request: [String: Any]) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(((request["body"] as? String) ?? "").utf8)) as? [String: Any]) ?? [:]
    }

    /// A request header (the names as the client sent them).
    public static func header(_ request: [String: Any], _ name: String) -> String? {
        (request["headers"] as? [String: String])?.first { $0.key.lowercased() == name.lowercased() }?.value
    }

    /// The whole of what the target received, for checks that a secret is not in it.
    public func everythingReceived() -> String { (try? String(contentsOfFile: record, encoding: .utf8)) ?? "" }

    public func stop() { process.stop() }

    deinit { try? FileManager.default.removeItem(atPath: record) }
}
