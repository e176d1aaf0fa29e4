/// A place alerts are forwarded to, off the machine (`[relay]` in
/// ccrelay.conf): a topic on an ntfy server, a gotify application, a
/// webhook that takes a JSON POST, or one of the push services Chinese
/// students' phones listen to (`forward = bark://…`, see `init(forward:)`).
public struct RelayTarget: Sendable, Hashable, CustomStringConvertible {
    /// The publish API a target speaks.
    public enum Service: String, Sendable, Hashable, CaseIterable {
        case ntfy, gotify, webhook
        case bark, serverchan, pushplus, wecom, dingtalk, feishu, telegram, mail

        /// The services with a `[relay]` key of their own (`ntfy = URL`); every one has `forward = URL`.
        public static let keyed: [Service] = [.ntfy, .gotify, .webhook]

        /// Its name as people know it.
        public var title: String {
            switch self {
            case .ntfy: "ntfy"
            case .gotify: "gotify"
            case .webhook: "webhook"
            case .bark: "Bark"
            case .serverchan: "ServerChan"
            case .pushplus: "PushPlus"
            case .wecom: "WeCom"
            case .dingtalk: "DingTalk"
            case .feishu: "Feishu"
            case .telegram: "Telegram"
            case .mail: "E-mail"
            }
        }
    }

    public let service: Service
    /// As configured: it may hold a secret (gotify's `?token=`, a password
    /// before `@`, a push service's key), so it is kept in the 0600 files and never shown or logged.
    public let url: String
    /// A push service's address (nil for ntfy, gotify, a webhook and mail).
    public let push: PushAddress?
    /// A mail target's server, login and addresses.
    public let mail: MailAddress?
    /// The proxy this target is reached through (`proxy=`: http or socks5h);
    /// nil: straight, whatever the environment says.
    public let proxy: String?
    /// At most so many messages in a window (`limit=`; ServerChan's free 5 a day unless given).
    public var budget: RelayBudget?

    /// Checks `url` for `service`; fails with what is wrong and how to write it.
    public init(service: Service, url: String) throws(RelayTargetProblem) {
        guard let parsed = RelayURL(url) else {
            throw RelayTargetProblem(
                "\(service.rawValue) must be an https:// URL (plain http only to a loopback address) without spaces, got '\(RelayURL.redacted(url))'")
        }
        switch service {
        case .ntfy:
            guard let topic = parsed.pathSegments.last, RelayURL.isTopic(topic) else {
                throw RelayTargetProblem(
                    "ntfy needs the server and the topic, such as https://ntfy.campus.example/ccrelay-20231234 (a topic is 1-64 letters, digits, - or _)")
            }
        case .gotify:
            guard parsed.queryItem("token").map({ !$0.isEmpty }) == true else {
                throw RelayTargetProblem(
                    "gotify needs the application token in the URL, such as https://gotify.campus.example/message?token=APP_TOKEN (Apps → create application in gotify's web UI)")
            }
        case .webhook:
            break
        default:
            throw RelayTargetProblem("\(service.title) is written as forward = URL (see man ccrelay.conf), not \(service.rawValue) = URL")
        }
        self.init(service: service, url: url, push: nil, proxy: nil)
    }

    init(service: Service, url: String, push: PushAddress?, mail: MailAddress? = nil, proxy: String?) {
        self.service = service
        self.url = url
        self.push = push
        self.mail = mail
        self.proxy = proxy
        budget = service == .serverchan ? .serverChanFree : nil
    }

    /// The outbox's name for the target: what stays the same when the user
    /// fixes its secret — its service, scheme, host and port, and path
    /// (ntfy's topic is its last segment), without user information, query
    /// or a webhook's long path segments (tokens). Alerts queued for a target whose
    /// token was wrong go out once it is fixed; no secret is in the name.
    public var name: String {
        if let push { return "\(service.rawValue) \(push.host) #\(push.fingerprint)" }
        if let mail { return "\(service.rawValue) \(mail.host) #\(mail.fingerprint)" }
        guard let parsed = RelayURL(url) else { return service.rawValue + " " + RelayURL.redacted(url) }
        let host = RelayURL.host(of: parsed.authority).lowercased()
        let hostPort = parsed.authority.split(separator: "@", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        let port = hostPort.dropFirst(host.count)
        // A webhook's long segments are tokens; ntfy's topic and gotify's path are kept.
        let path = parsed.pathSegments.map { service == .webhook && $0.count >= 16 ? "…" : String($0) }.joined(separator: "/")
        return "\(service.rawValue) \(parsed.scheme)://\(host)\(port)/\(path)"
    }

    /// The outbox name of a target written by ccrelay 0.1 (`SERVICE URL`,
    /// the whole URL), as this version names it; nil when it is not a valid target.
    public static func name(ofStored stored: String) -> String? {
        guard let space = stored.firstIndex(of: " "), let service = Service(rawValue: String(stored[..<space])),
            let target = try? RelayTarget(service: service, url: String(stored[stored.index(after: space)...]))
        else { return nil }
        return target.name
    }

    /// For people and logs: the service, its server and a fingerprint of
    /// what is secret in the URL (a push key, a mail login, an ntfy topic, a
    /// gotify token, a webhook's path and query) — never the secret itself.
    public var displayName: String {
        if let push { return "\(service.title) \(push.host) #\(push.fingerprint)" }
        if let mail { return "\(service.title) \(mail.host) #\(mail.fingerprint)" }
        guard let parsed = RelayURL(url) else { return service.rawValue + " " + RelayURL.redacted(url) }
        let hostPort = parsed.authority.split(separator: "@", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        let secret = parsed.path + (parsed.query.map { "?" + $0 } ?? "") + (parsed.authority.contains("@") ? parsed.authority : "")
        return "\(service.rawValue) \(parsed.scheme)://\(hostPort)" + (secret.isEmpty || secret == "/" ? "" : " #\(Fingerprint.of(secret))")
    }

    public var description: String { displayName }

    /// The longest message text (title and body, UTF-8 bytes: never fewer
    /// than the UTF-16 units some services count) the service shows whole;
    /// a digest carries no more alerts than fit (`RelayDigest.fitting`).
    public var messageRoom: Int {
        switch service {
        case .telegram, .ntfy: 4000
        case .bark: 3000
        case .wecom: 2000
        case .serverchan, .pushplus, .dingtalk, .feishu: 16_000
        case .gotify, .webhook, .mail: 32_000
        }
    }
}

/// Why a `[relay]` URL cannot be used, as a sentence with the fix.
public struct RelayTargetProblem: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// The parts of a target URL the forwarding code needs, checked as strictly
/// as the CC/1 server's: https, or http to a loopback address only; no
/// spaces, control characters or fragment; at most 2,000 bytes.
struct RelayURL: Hashable {
    var scheme: String
    /// `host[:port]`, with any user information before it.
    var authority: String
    var path: String
    var query: String?

    init?(_ text: String) {
        guard text.utf8.count <= 2000, text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }),
            !text.contains("#"), let separator = text.firstRange(of: "://")
        else { return nil }
        scheme = String(text[..<separator.lowerBound]).lowercased()
        let rest = text[separator.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        authority = String(rest[..<authorityEnd])
        let afterAuthority = rest[authorityEnd...]
        if let question = afterAuthority.firstIndex(of: "?") {
            path = String(afterAuthority[..<question])
            query = String(afterAuthority[afterAuthority.index(after: question)...])
        } else {
            path = String(afterAuthority)
            query = nil
        }
        let givenHost = Self.host(of: authority)
        let host = givenHost.lowercased()
        guard !host.isEmpty, Self.hasValidPort(authority, host: givenHost) else { return nil }
        guard scheme == "https" || scheme == "http" && Loopback.isLoopbackHost(host) else { return nil }
    }

    /// The host of `host[:port]` (after any `user:password@`).
    static func host(of authority: String) -> String {
        let hostPort = authority.split(separator: "@", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        if hostPort.hasPrefix("["), let close = hostPort.firstIndex(of: "]") { return String(hostPort[...close]) }
        return String(hostPort.split(separator: ":", omittingEmptySubsequences: false).first ?? "")
    }

    /// No port, or one from 1 to 65535.
    static func hasValidPort(_ authority: String, host: String) -> Bool {
        let hostPort = authority.split(separator: "@", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        let afterHost = hostPort.dropFirst(host.count)
        guard !afterHost.isEmpty else { return true }
        guard afterHost.hasPrefix(":"), let port = Int(afterHost.dropFirst()) else { return false }
        return (1...65535).contains(port)
    }

    var pathSegments: [Substring] { path.split(separator: "/") }

    /// The value of `name=` in the query, if present.
    func queryItem(_ name: String) -> String? {
        for item in (query ?? "").split(separator: "&") where item.hasPrefix(name + "=") {
            return String(item.dropFirst(name.count + 1))
        }
        return nil
    }

    /// ntfy's topic rule: 1 to 64 of `A-Z a-z 0-9 _ -`.
    static func isTopic(_ text: Substring) -> Bool {
        (1...64).contains(text.count) && text.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == "-"
        }
    }

    /// What may be shown of a URL someone wrote (in an error, a log line, a
    /// status everyone reads): an http(s) URL's scheme and server alone
    /// (`https://ntfy.sh/…` — its path may be a topic or a token, its user
    /// information a password, its query a token); any other scheme's name
    /// alone (`bark://…` — a push URL's first segment is its key); and of
    /// text that is no URL, only its length.
    static func redacted(_ text: String) -> String {
        guard let separator = text.firstRange(of: "://") else { return "(\(text.count) characters, not shown)" }
        let scheme = String(text[..<separator.lowerBound].prefix(16))
        let shownScheme = scheme.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "+" }
            ? scheme : "(a scheme)"
        guard ["http", "https", "socks5h", "socks5"].contains(scheme.lowercased()) else { return shownScheme + "://…" }
        let rest = text[separator.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let hostPort = authority.split(separator: "@", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        let printable = hostPort.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F } && hostPort.count <= 255
        let shownAuthority = printable ? (authority.contains("@") ? "…@" : "") + hostPort : "…"
        return shownScheme + "://" + shownAuthority + (authority.count < rest.count ? "/…" : "")
    }
}

/// Which alerts are forwarded (`[relay] kinds`): alert kind names, plus
/// `notice-critical` for the campus notices the server marks critical.
public struct RelaySelection: Sendable, Hashable {
    public var kinds: Set<AlertKind>
    /// Notices of critical urgency, even when `notice` itself is not selected.
    public var criticalNotices: Bool

    public init(kinds: Set<AlertKind>, criticalNotices: Bool) {
        self.kinds = kinds
        self.criticalNotices = criticalNotices
    }

    /// The default: logged-out, keepalive-failing, credentials, back-online (a phone that heard the bad
    /// news hears it is over), notice-critical.
    public static let standard = RelaySelection(kinds: [.loggedOut, .keepAliveFailing, .credentials, .backOnline], criticalNotices: true)

    /// Never forwarded: the status bubble, and the alert that forwarding itself is refused.
    static let local: Set<AlertKind> = [.status, .relayRefused]

    /// The names `kinds =` takes.
    public static let names: [String] = AlertKind.allCases.filter { !local.contains($0) }.map(\.rawValue) + ["notice-critical"]

    /// The selection as `kinds =` writes it.
    public var names: [String] {
        AlertKind.allCases.filter { kinds.contains($0) }.map(\.rawValue) + (criticalNotices ? ["notice-critical"] : [])
    }

    /// Whether `alert` goes out (the local kinds never do).
    public func forwards(_ alert: Alert) -> Bool {
        guard !Self.local.contains(alert.kind) else { return false }
        return kinds.contains(alert.kind) || alert.kind == .notice && criticalNotices && alert.urgency == .critical
    }

    /// Reads a comma-separated list of names; fails naming the first unknown one.
    public static func parse(_ text: String) -> Result<RelaySelection, RelayTargetProblem> {
        var selection = RelaySelection(kinds: [], criticalNotices: false)
        for part in text.split(separator: ",") {
            let name = part.trimmed
            if name == "notice-critical" {
                selection.criticalNotices = true
            } else if let kind = AlertKind(rawValue: name), !local.contains(kind) {
                selection.kinds.insert(kind)
            } else {
                var message = "unknown alert kind '\(name)' in kinds"
                if let near = names.min(by: { editDistance($0, name) < editDistance($1, name) }), editDistance(near, name) <= 3 {
                    message += "; did you mean '\(near)'?"
                }
                return .failure(RelayTargetProblem(message + " (known: \(names.joined(separator: ", ")))"))
            }
        }
        guard !selection.kinds.isEmpty || selection.criticalNotices else {
            return .failure(RelayTargetProblem("kinds is empty; name at least one of: \(names.joined(separator: ", "))"))
        }
        return .success(selection)
    }
}
