import CoreVocabulary

/// A place alerts are forwarded to, off the machine (`[relay]` in
/// ccrelay.conf): a topic on an ntfy server, a gotify application, a webhook
/// that takes a JSON POST, a mailbox, or one of the push services Chinese
/// students' phones listen to — one of `PushServices.all`.
public struct ForwardTarget: Sendable, Hashable, CustomStringConvertible {
    public let service: any PushService
    /// As configured: it may hold a secret (gotify's `?token=`, a password
    /// before `@`, a push service's key), so it is kept in the 0600 files and
    /// never shown or logged. For `forward = ntfys://…` and the like, the https URL it stands for.
    public let url: String
    /// A push service's address (nil for ntfy, gotify, a webhook and mail).
    public let push: PushAddress?
    /// A mail target's server, login and addresses.
    public let mail: MailAddress?
    /// The proxy this target is reached through (`proxy=`: http or socks5h);
    /// nil: straight, whatever the environment says.
    public let proxy: String?
    /// At most so many messages in a window (`limit=`, else the service's own).
    public var budget: ForwardBudget?

    init(service: any PushService, url: String, push: PushAddress? = nil, mail: MailAddress? = nil, proxy: String?) {
        self.service = service
        self.url = url
        self.push = push
        self.mail = mail
        self.proxy = proxy
        budget = service.defaultBudget
    }

    /// `[relay] KEY = URL`: `ntfy`, `gotify` or `webhook` and its https URL;
    /// fails with what is wrong and how to write it.
    public init(key: String, url: String) throws(ForwardTargetProblem) {
        guard let service = PushServices.web.first(where: { $0.configurationKey == key }) else {
            let title = PushServices.named(key)?.title ?? key
            throw ForwardTargetProblem { localize in
                TextTemplate.fill(localize("%s is written as forward = URL (see man ccrelay.conf), not %s = URL"), title, key)
            }
        }
        try self.init(web: service, url: url, proxy: nil)
    }

    init(web service: any WebService, url: String, proxy: String?) throws(ForwardTargetProblem) {
        guard let parsed = TargetURL(url) else {
            let key = service.configurationKey
            throw ForwardTargetProblem { localize in
                TextTemplate.fill(localize("%s must be an https:// URL (plain http only to a loopback address) without spaces, got '%s'"),
                                  key, TargetURL.redacted(url, localize: localize))
            }
        }
        try service.check(parsed)
        self.init(service: service, url: url, proxy: proxy)
    }

    /// One `[relay] forward = URL` line, Apprise-style, parsed here (no
    /// Apprise): the schemes of `PushServices.all`, each documented in its
    /// service's file and in ccrelay.conf(5). Each may add `limit=N/day` or
    /// `limit=N/hour` (a budget: what is over it goes as one digest at the
    /// next free slot), and `proxy=http://HOST:PORT` or
    /// `proxy=socks5h://HOST:PORT` (Telegram needs one from China).
    public init(forward text: String) throws(ForwardTargetProblem) {
        let parsed = try ForwardURL(text)
        let budget = try parsed.options["limit"].map { limit throws(ForwardTargetProblem) in try ForwardURL.budget(limit) }
        let proxy = try parsed.options["proxy"].map { proxy throws(ForwardTargetProblem) in try ForwardURL.checkedProxy(proxy) }
        guard let service = PushServices.serving(scheme: parsed.scheme) else {
            let scheme = parsed.scheme
            let schemes = PushServices.schemes
            let near = schemes.min(by: { editDistance($0, scheme) < editDistance($1, scheme) }).flatMap { editDistance($0, scheme) <= 2 ? $0 : nil }
            throw ForwardTargetProblem { localize in
                TextTemplate.fill(localize("unknown forward scheme '%s://' (known: %s)"), scheme, localize.list(schemes.map { $0 + "://" }))
                    + (near.map { TextTemplate.fill(localize("; did you mean '%s'?"), $0 + "://") } ?? "")
            }
        }
        try parsed.allow(service.options.union(["proxy", "limit"]))
        self = try service.target(parsed, text: text, proxy: proxy)
        if let budget { self.budget = budget }
    }

    public static func == (a: ForwardTarget, b: ForwardTarget) -> Bool {
        a.service.name == b.service.name && a.url == b.url && a.push == b.push && a.mail == b.mail && a.proxy == b.proxy
            && a.budget == b.budget
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(service.name)
        hasher.combine(url)
    }

    /// The outbox's name for the target: what stays the same when the user
    /// fixes its secret — its service, scheme, host and port, and path
    /// (ntfy's topic is its last segment), without user information, query
    /// or a webhook's long path segments (tokens). Alerts queued for a target whose
    /// token was wrong go out once it is fixed; no secret is in the name.
    public var name: String {
        if let push { return "\(service.name) \(push.host) #\(push.fingerprint)" }
        if let mail { return "\(service.name) \(mail.host) #\(mail.fingerprint)" }
        guard let parsed = TargetURL(url), let web = service as? any WebService else { return service.name + " " + TargetURL.redacted(url, localize: .english) }
        let host = TargetURL.host(of: parsed.authority).lowercased()
        let hostPort = parsed.authority.split(separator: "@", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        let port = hostPort.dropFirst(host.count)
        return "\(service.name) \(parsed.scheme)://\(host)\(port)/\(web.outboxPath(parsed.pathSegments))"
    }

    /// The outbox name of a target written by ccrelay 0.1 (`SERVICE URL`,
    /// the whole URL), as this version names it; nil when it is not a valid target.
    public static func name(ofStored stored: String) -> String? {
        guard let space = stored.firstIndex(of: " "),
            let target = try? ForwardTarget(key: String(stored[..<space]), url: String(stored[stored.index(after: space)...]))
        else { return nil }
        return target.name
    }

    /// For people and logs: the service, its server and a fingerprint of
    /// what is secret in the URL (a push key, a mail login, an ntfy topic, a
    /// gotify token, a webhook's path and query) — never the secret itself.
    public var displayName: String {
        if let push { return "\(service.title) \(push.host) #\(push.fingerprint)" }
        if let mail { return "\(service.title) \(mail.host) #\(mail.fingerprint)" }
        guard let parsed = TargetURL(url) else { return service.name + " " + TargetURL.redacted(url, localize: .english) }
        let hostPort = parsed.authority.split(separator: "@", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        let secret = parsed.path + (parsed.query.map { "?" + $0 } ?? "") + (parsed.authority.contains("@") ? parsed.authority : "")
        return "\(service.name) \(parsed.scheme)://\(hostPort)" + (secret.isEmpty || secret == "/" ? "" : " #\(Fingerprint.of(secret))")
    }

    public var description: String { displayName }

    /// Whether `relay test NAME` means this target: its service by name, by its
    /// title as shown (`E-mail`, `email`: case and punctuation aside) or by a
    /// scheme (`mailtos`, `tgram`), the start of its URL, or its shown name; an empty name, none.
    public func isNamed(_ name: String) -> Bool {
        func folded(_ text: String) -> String { String(text.lowercased().filter { $0.isLetter || $0.isNumber }) }
        guard !name.isEmpty else { return false }
        return service.name == name || folded(service.title) == folded(name) || service.schemes.contains(name.lowercased())
            || url.hasPrefix(name) || displayName == name
    }

    /// The request for `alert`: its body with the late note when it is late
    /// (`raisedAt`: its time as people read it here; `localize` translates),
    /// the headers every request carries, written by the service. DingTalk
    /// and Feishu sign with `signer` at `now` (seconds since the epoch).
    public func request(for alert: ForwardedAlert, raisedAt: String, localize: Localizer, now: Double = 0,
                        signer: MessageSigner? = nil) -> ForwardRequest {
        var message = alert.body
        if alert.late {
            message += "\n\n" + TextTemplate.fill(localize("Delayed: raised at %s on %s."), raisedAt, alert.host)
        }
        let key = String(alert.key.unicodeScalars.filter { $0.value > 0x20 && $0.value < 0x7F }.map(Character.init).prefix(100))
        let headers = ["Content-Type: application/json", "Idempotency-Key: " + key]
        return service.request(PushContent(alert: alert, message: message, headers: headers, now: now, signer: signer), to: self)
    }
}
