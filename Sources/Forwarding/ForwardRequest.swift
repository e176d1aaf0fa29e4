import CoreVocabulary

/// A request to a forwarding target, ready for libcurl: an HTTP POST, or for
/// mail the message and its envelope.
public struct ForwardRequest: Sendable, Hashable {
    public var url: String
    /// `Name: value` lines, without line breaks.
    public var headers: [String]
    public var body: String
    /// The target's `proxy=` (nil: straight to it).
    public var proxy: String?
    /// How its answer says it took the message.
    public var rule: AnswerRule
    /// Secrets the URL does not show as such (a device key in the body, a bot token in the path).
    public var secretValues: [String]
    /// For mail: the envelope and the login (the body is the message, the URL the SMTP server).
    public var mail: MailEnvelope?

    public init(url: String, headers: [String], body: String, proxy: String? = nil, rule: AnswerRule = .status,
                secretValues: [String] = [], mail: MailEnvelope? = nil) {
        self.url = url
        self.headers = headers
        self.body = body
        self.proxy = proxy
        self.rule = rule
        self.secretValues = secretValues
        self.mail = mail
    }
}

/// HMAC-SHA256 of `message` with `key`: how DingTalk and Feishu bots check
/// that a message comes from who holds the secret. Pure, but libcrypto's:
/// the shell passes `MessageSignature.hmacSHA256` (ForwardingTransport).
public typealias MessageSigner = @Sendable (_ key: [UInt8], _ message: [UInt8]) -> [UInt8]

/// What a service writes its request from: the alert, the text people read
/// (with the late note), the headers every request carries, the moment and the signer.
public struct PushContent: Sendable {
    public var alert: ForwardedAlert
    /// The alert's body, and when it is late, when and where it was raised.
    public var message: String
    /// `Content-Type: application/json` and the alert's key as `Idempotency-Key`.
    public var headers: [String]
    /// Seconds since the epoch (DingTalk and Feishu sign the moment).
    public var now: Double
    /// Without it a signing secret is not used.
    public var signer: MessageSigner?
}

extension ForwardRequest {
    /// What this request carries that no one may read back: the URL's user
    /// information, its query values (gotify's token, a webhook's secret)
    /// and long path segments (tokens in the path), and the values of its
    /// credential headers. Each is at least 4 characters (shorter ones say
    /// nothing and would blot out ordinary words).
    public var secrets: [String] {
        var found: [String] = secretValues
        // The proxy's user information (`socks5h://USER:PASS@HOST:PORT`).
        if let proxy, let separator = proxy.firstRange(of: "://") {
            let authority = proxy[separator.upperBound...].prefix { $0 != "/" }
            if let at = authority.lastIndex(of: "@") {
                let information = String(authority[..<at])
                found += [information] + information.split(separator: ":").map(String.init)
            }
        }
        if let url = TargetURL(url) {
            if let at = url.authority.lastIndex(of: "@") {
                let information = String(url.authority[..<at])
                found.append(information)
                found += information.split(separator: ":").map(String.init)
            }
            if let query = url.query {
                found.append(query)
                for item in query.split(separator: "&") {
                    let value = item.split(separator: "=", maxSplits: 1).dropFirst().first.map(String.init) ?? String(item)
                    found.append(value)
                }
            }
            found += url.pathSegments.filter { $0.count >= 16 }.map(String.init)
        }
        for header in headers {
            guard let colon = header.firstIndex(of: ":"), Self.isCredential(header[..<colon]) else { continue }
            let value = header[header.index(after: colon)...].trimmed
            found.append(value)
            found += value.split(separator: " ").map(String.init)
        }
        var decoded = found.filter { $0.contains("%") || $0.contains("+") }.compactMap { PercentEncoding.decode($0, plusIsSpace: true) }
        decoded.removeAll { found.contains($0) }
        return (found + decoded).filter { $0.count >= 4 }.sorted { $0.count > $1.count }
    }

    /// `text` (a target's answer) with this request's secrets replaced by
    /// `…`, and the value of every credential-carrying header line in it
    /// (a page that echoes the request) cut: what may be logged, stored and shown.
    public func redacting(_ text: String) -> String {
        var result = text
        for secret in secrets { result = result.replacing(secret, with: "…") }
        let lines = result.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            guard let colon = line.firstIndex(of: ":"), Self.isCredential(line[..<colon].trimmed[...]) else { return String(line) }
            return line[..<colon] + ": …"
        }
        return lines.joined(separator: "\n")
    }

    /// A header name that carries credentials: Authorization, Cookie, and
    /// names with token, secret, password or key in them (not Idempotency-Key, which is not secret).
    static func isCredential(_ name: Substring) -> Bool {
        let lower = name.lowercased()
        guard !lower.isEmpty, lower.count <= 64, lower.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
            return false
        }
        if lower == "idempotency-key" { return false }
        return ["authorization", "cookie", "token", "secret", "password", "passwd", "key"].contains { lower.contains($0) }
    }
}
