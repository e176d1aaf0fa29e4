/// One journaled alert on its way to a relay target: only what the user saw
/// (kind, title, body, urgency, when) and the host it came from. The session
/// token, the password and the certificate are not among its fields, so they
/// cannot leave the machine this way.
public struct ForwardedAlert: Sendable, Hashable {
    public var kind: AlertKind
    public var title: String
    public var body: String
    public var urgency: Urgency
    /// When it was raised, in seconds since the Unix epoch.
    public var postedAt: Double
    /// The idempotency key: one per alert, the same for every target and every attempt.
    public var key: String
    public var host: String
    /// It did not go out when raised (an attempt failed, the daemon
    /// restarted, or it waited over a minute): the message says so, with the original time.
    public var late: Bool

    public init(kind: AlertKind, title: String, body: String, urgency: Urgency, postedAt: Double, key: String, host: String,
                late: Bool) {
        self.kind = kind
        self.title = title
        self.body = body
        self.urgency = urgency
        self.postedAt = postedAt
        self.key = key
        self.host = host
        self.late = late
    }
}

/// An HTTP POST to a relay target, ready for libcurl.
public struct RelayRequest: Sendable, Hashable {
    public var url: String
    /// `Name: value` lines, without line breaks.
    public var headers: [String]
    public var body: String
    /// The target's `proxy=` (nil: straight to it).
    public var proxy: String?
    /// How its answer says it took the message.
    public var rule: RelayAnswerRule
    /// Secrets the URL does not show as such (a device key in the body, a bot token in the path).
    public var secretValues: [String]
    /// For mail: the envelope and the login (the body is the message, the URL the SMTP server).
    public var mail: MailEnvelope?

    public init(url: String, headers: [String], body: String, proxy: String? = nil, rule: RelayAnswerRule = .status,
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

/// The publish request each service expects (docs/forwarding.md):
/// - ntfy: JSON publishing to the server's root (`topic`, `title`,
///   `message`, `priority` 5/3/2 for critical/normal/low, `tags`);
/// - gotify: `POST /message?token=…` with `title`, `message`, `priority` (critical 8, normal 5, low 2);
/// - webhook: the alert as JSON (`id`, `kind`, `title`, `body`, `urgency`, `posted_at`, `host`, `late`).
/// Every request carries the alert's key as `Idempotency-Key`.
public enum RelayMessage {
    /// An alert that waited longer than this in the outbox is marked late.
    public static let lateAfter: Double = 60

    /// The request for `alert` to `target`. `raisedAt` is the alert's time as
    /// people read it (local time), for the late note; `localize` translates.
    /// DingTalk and Feishu sign with `hmacSHA256(key, message)` at `now`
    /// (seconds since the epoch); without it a signing secret is not used.
    public static func request(_ alert: ForwardedAlert, to target: RelayTarget, raisedAt: String, localize: Localizer,
                               now: Double = 0, hmacSHA256: (([UInt8], [UInt8]) -> [UInt8])? = nil) -> RelayRequest {
        var message = alert.body
        if alert.late {
            message += "\n\n" + AlertCatalogue.fill(localize("Delayed: raised at %s on %s."), raisedAt, alert.host)
        }
        let headers = ["Content-Type: application/json", "Idempotency-Key: " + headerSafe(alert.key)]
        if let push = target.push {
            return PushMessages.request(alert, message: message, to: target, push: push, headers: headers, now: now, hmacSHA256: hmacSHA256)
        }
        if let mail = target.mail {
            return RelayRequest(
                url: mail.server, headers: [], body: MailMessage.text(alert, message: message, from: mail.from, to: mail.to), proxy: target.proxy,
                rule: .smtp, secretValues: [mail.user, mail.password],
                mail: MailEnvelope(from: mail.from, to: mail.to, user: mail.user, password: mail.password))
        }
        switch target.service {
        case .ntfy:
            let url = RelayURL(target.url)
            let topic = url.flatMap { $0.pathSegments.last.map(String.init) } ?? ""
            let root = url.map { $0.scheme + "://" + $0.authority + "/" + $0.pathSegments.dropLast().map { $0 + "/" }.joined() } ?? target.url
            let body = JSONText.object([
                ("topic", JSONText.string(topic)), ("title", JSONText.string(alert.title)), ("message", JSONText.string(message)),
                ("priority", String(ntfyPriority(alert.urgency))),
                ("tags", JSONText.array([ntfyTag(alert), "ccrelay", alert.host].map(JSONText.string))),
            ])
            // The topic is a secret (whoever knows it reads the alerts): never in what the answer shows.
            return RelayRequest(url: root + (url?.query.map { "?" + $0 } ?? ""), headers: headers, body: body, proxy: target.proxy,
                                secretValues: [topic])
        case .gotify:
            let body = JSONText.object([
                ("title", JSONText.string(alert.title)), ("message", JSONText.string(message)),
                ("priority", String(gotifyPriority(alert.urgency))),
                ("extras", JSONText.object([("client::display", JSONText.object([("contentType", JSONText.string("text/plain"))]))])),
            ])
            return RelayRequest(url: target.url, headers: headers, body: body, proxy: target.proxy)
        case .webhook:
            // Every path segment of a webhook may be its token, however short.
            let path = RelayURL(target.url)?.pathSegments.map(String.init) ?? []
            let body = JSONText.object([
                ("id", JSONText.string(alert.key)), ("kind", JSONText.string(alert.kind.rawValue)), ("title", JSONText.string(alert.title)),
                ("body", JSONText.string(alert.body)), ("urgency", JSONText.string(urgencyName(alert.urgency))),
                ("posted_at", String(Int64(alert.postedAt.isFinite ? max(0, min(alert.postedAt, 253_402_300_800)) : 0))),
                ("host", JSONText.string(alert.host)), ("late", alert.late ? "true" : "false"),
            ])
            return RelayRequest(url: target.url, headers: headers, body: body, proxy: target.proxy, secretValues: path)
        case .bark, .serverchan, .pushplus, .wecom, .dingtalk, .feishu, .telegram, .mail:
            // A push service or mail always has its address (`init(forward:)` makes both).
            return RelayRequest(url: target.url, headers: headers, body: "{}", proxy: target.proxy)
        }
    }

    /// ntfy's priorities: 5 urgent, 3 default, 2 low.
    public static func ntfyPriority(_ urgency: Urgency) -> Int {
        switch urgency {
        case .critical: 5
        case .normal: 3
        case .low: 2
        }
    }

    /// gotify's priorities (0-10; its Android app rings from 8).
    public static func gotifyPriority(_ urgency: Urgency) -> Int {
        switch urgency {
        case .critical: 8
        case .normal: 5
        case .low: 2
        }
    }

    static func urgencyName(_ urgency: Urgency) -> String {
        switch urgency {
        case .critical: "critical"
        case .normal: "normal"
        case .low: "low"
        }
    }

    /// The emoji tag ntfy shows before the title.
    static func ntfyTag(_ alert: ForwardedAlert) -> String {
        if alert.kind == .backOnline { return "white_check_mark" }
        switch alert.urgency {
        case .critical: return "rotating_light"
        case .normal: return "warning"
        case .low: return "information_source"
        }
    }

    private static func headerSafe(_ text: String) -> String {
        String(text.unicodeScalars.filter { $0.value > 0x20 && $0.value < 0x7F }.map(Character.init).prefix(100))
    }
}

/// How long a target that failed is left alone: 5 s after the first failure,
/// doubling to at most 5 minutes. A campus session coming back (or the
/// network) retries at once instead.
public enum RelayBackoff {
    public static let cap: Duration = .seconds(300)

    public static func delay(afterFailures failures: Int) -> Duration {
        let doublings = min(max(failures, 1), 16) - 1
        return min(.seconds(5 << doublings), cap)
    }
}

extension RelayRequest {
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
        if let url = RelayURL(url) {
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
