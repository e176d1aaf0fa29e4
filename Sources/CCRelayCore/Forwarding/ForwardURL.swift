import CoreVocabulary

/// Where a push service takes messages, from a `forward = URL` line.
public struct PushAddress: Sendable, Hashable {
    /// The service's API: `https://host[:port]` (its public server, a
    /// self-hosted Bark server, or `api=`).
    public var base: String
    /// The device key, SendKey, token, webhook key or hook id, or bot token: a secret.
    public var key: String
    /// Telegram's chat (a number, or `@channel`).
    public var chat: String?
    /// DingTalk's or Feishu's signing secret.
    public var secret: String?

    /// The server, as shown (`api.day.app`).
    public var host: String { TargetURL(base)?.authority ?? base }

    /// Eight hex digits that tell two keys apart without saying either.
    public var fingerprint: String { Fingerprint.of(key + "/" + (chat ?? "")) }
}

extension ForwardTarget {
    /// The schemes `forward =` takes, Apprise's names for them.
    public static let forwardSchemes = ["bark", "barks", "schan", "pushplus", "wecombot", "dingtalk", "feishu", "tgram", "mailto", "mailtos",
                                        "ntfy", "ntfys", "gotify", "gotifys", "json", "jsons"]

    /// One `[relay] forward = URL` line, Apprise-style, parsed here (no Apprise):
    /// - `bark://[HOST[:PORT]/]DEVICE_KEY` (the public Bark server unless a host is given)
    /// - `schan://SENDKEY` (ServerChan Turbo; a `sctp…` key is Server³)
    /// - `pushplus://TOKEN`, `wecombot://KEY`
    /// - `dingtalk://TOKEN[?secret=SECRET]`, `feishu://HOOK_ID[?secret=SECRET]` (signed)
    /// - `tgram://BOT_TOKEN/CHAT_ID`
    /// - `mailtos://USER:PASS@HOST[:PORT]/?to=ADDR[&from=ADDR]` (implicit TLS, port 465),
    ///   `mailto://…` (STARTTLS, required; port 587): the login's password percent-encoded
    /// - `ntfys://HOST/TOPIC`, `gotifys://HOST[/PATH]/TOKEN`, `jsons://HOST/PATH`:
    ///   the same targets as `ntfy =`, `gotify =` and `webhook =` (`ntfy://`,
    ///   `gotify://` and `json://` are plain http, to a loopback address only).
    /// Each may add `limit=N/day` or `limit=N/hour` (a budget: what is over it
    /// goes as one digest at the next free slot; ServerChan has 5/day unless
    /// given), and `proxy=http://HOST:PORT` or `proxy=socks5h://HOST:PORT`
    /// (Telegram needs one from China), and the push services `api=https://HOST[:PORT]`
    /// in place of the service's own server (a mirror, or a test's recorder).
    public init(forward text: String) throws(ForwardTargetProblem) {
        let parsed = try ForwardURL(text)
        let budget = try parsed.options["limit"].map { limit throws(ForwardTargetProblem) in
            guard let budget = ForwardBudget(limit) else {
                throw ForwardTargetProblem("limit= must be N/day or N/hour (N from 1 to 1000), such as limit=5/day, got '\(limit)'")
            }
            return budget
        }
        try self.init(parsing: parsed, text: text)
        if let budget { self.budget = budget }
    }

    private init(parsing parsed: ForwardURL, text: String) throws(ForwardTargetProblem) {
        let proxy = try parsed.options["proxy"].map { proxy throws(ForwardTargetProblem) in try Self.checkedProxy(proxy) }
        func allow(_ names: Set<String>) throws(ForwardTargetProblem) {
            let names = names.union(["limit"])
            if let unknown = parsed.options.keys.sorted().first(where: { !names.contains($0) }) {
                throw ForwardTargetProblem("\(parsed.scheme):// does not take '\(unknown)=' (it takes: \(names.sorted().joined(separator: ", ")))")
            }
        }
        func single(_ what: String, example: String) throws(ForwardTargetProblem) -> String {
            guard parsed.segments.count == 1, let key = parsed.segments.first, Self.isKey(key) else {
                throw ForwardTargetProblem("\(parsed.scheme):// needs \(what), such as \(example)")
            }
            return key
        }
        func base(_ standard: String) throws(ForwardTargetProblem) -> String {
            guard let api = parsed.options["api"] else { return standard }
            guard let url = TargetURL(api), url.path.isEmpty || url.path == "/", url.query == nil, !url.authority.contains("@") else {
                throw ForwardTargetProblem("api= must be https://HOST[:PORT] (plain http only to a loopback address), got '\(TargetURL.redacted(api))'")
            }
            return url.scheme + "://" + url.authority
        }
        let service: Service
        let push: PushAddress
        switch parsed.scheme {
        case "ntfy", "ntfys", "gotify", "gotifys", "json", "jsons":
            try allow(["proxy"])
            let secure = parsed.scheme.hasSuffix("s")
            let scheme = secure ? "https://" : "http://"
            let keyed: Service = parsed.scheme.hasPrefix("ntfy") ? .ntfy : parsed.scheme.hasPrefix("gotify") ? .gotify : .webhook
            var url = scheme + parsed.segments.joined(separator: "/")
            if keyed == .gotify {
                guard parsed.segments.count >= 2, let token = parsed.segments.last else {
                    throw ForwardTargetProblem("\(parsed.scheme):// needs the server and the application token, such as gotifys://gotify.campus.example/APP_TOKEN")
                }
                url = scheme + parsed.segments.dropLast().joined(separator: "/") + "/message?token=" + token
            }
            guard let target = try? ForwardTarget(service: keyed, url: url) else {
                // The service's own words on its URL, or: plain http goes to a loopback address only.
                if !secure, TargetURL(url) == nil, TargetURL("https://" + url.dropFirst("http://".count)) != nil {
                    throw ForwardTargetProblem("\(parsed.scheme):// is plain http, as Apprise reads it, which goes only to a loopback address: use \(parsed.scheme)s:// for https")
                }
                _ = try ForwardTarget(service: keyed, url: url)
                throw ForwardTargetProblem("\(parsed.scheme):// cannot be used")
            }
            self.init(service: keyed, url: target.url, push: nil, proxy: proxy)
            return
        case "bark", "barks":
            try allow(["proxy", "api"])
            guard (1...2).contains(parsed.segments.count), let key = parsed.segments.last, Self.isKey(key) else {
                throw ForwardTargetProblem("bark:// needs the device key from the Bark app, such as bark://DEVICE_KEY or barks://bark.campus.example/DEVICE_KEY")
            }
            // The key alone: the public server, over https (ccrelay's shorthand).
            var server = "https://api.day.app"
            if parsed.segments.count == 2 {
                // A server is a name with a dot, an address or localhost: `bark://KEY/extra` is a key with something after it.
                let named = parsed.segments[0]
                let host = TargetURL.host(of: named).lowercased()
                guard TargetURL("https://" + named).map({ !$0.authority.contains("@") }) == true,
                    host.contains(".") || host.hasPrefix("[") || host == "localhost"
                else {
                    throw ForwardTargetProblem(
                        "bark:// takes the device key alone (bark://DEVICE_KEY) or a server first (barks://HOST[:PORT]/DEVICE_KEY, the server a name with a dot, an address or localhost)")
                }
                // As Apprise reads it: bark:// with a server is plain http, barks:// https.
                let secure = parsed.scheme == "barks"
                guard let url = TargetURL((secure ? "https://" : "http://") + named) else {
                    throw ForwardTargetProblem("bark:// with a server is plain http, as Apprise reads it, which goes only to a loopback address: use barks://\(host)/DEVICE_KEY for https")
                }
                server = url.scheme + "://" + url.authority
            }
            service = .bark
            push = PushAddress(base: try base(server), key: key)
        case "schan":
            try allow(["proxy", "api"])
            let key = try single("the SendKey from sct.ftqq.com", example: "schan://SCT123456TxxxxxxxxxxxxxxxxxxxX")
            // Server³ keys are sctp{uid}t…; their server is {uid}.push.ft07.com.
            let lower = key.lowercased()
            let uid = lower.hasPrefix("sctp") ? lower.dropFirst(4).prefix { $0.isNumber } : ""
            service = .serverchan
            push = PushAddress(base: try base(uid.isEmpty ? "https://sctapi.ftqq.com" : "https://\(uid).push.ft07.com"), key: key)
        case "pushplus":
            try allow(["proxy", "api"])
            service = .pushplus
            push = PushAddress(base: try base("https://www.pushplus.plus"),
                               key: try single("the token from pushplus.plus", example: "pushplus://TOKEN"))
        case "wecombot":
            try allow(["proxy", "api"])
            service = .wecom
            push = PushAddress(base: try base("https://qyapi.weixin.qq.com"),
                               key: try single("the group bot's key (the key= of its webhook address)", example: "wecombot://KEY"))
        case "dingtalk", "feishu":
            try allow(["proxy", "api", "secret"])
            let dingtalk = parsed.scheme == "dingtalk"
            let key = try single(dingtalk ? "the robot's access_token" : "the bot's hook id (the end of its webhook address)",
                                 example: dingtalk ? "dingtalk://TOKEN?secret=SEC…" : "feishu://HOOK_ID?secret=SECRET")
            if let secret = parsed.options["secret"], secret.isEmpty || secret.utf8.count > 256 {
                throw ForwardTargetProblem("secret= must be the robot's signing secret (1-256 characters)")
            }
            service = dingtalk ? .dingtalk : .feishu
            push = PushAddress(base: try base(dingtalk ? "https://oapi.dingtalk.com" : "https://open.feishu.cn"), key: key,
                               secret: parsed.options["secret"])
        case "mailto", "mailtos":
            try allow(["proxy", "to", "from"])
            self.init(service: .mail, url: text, push: nil, mail: try Self.mailAddress(parsed), proxy: proxy)
            return
        case "tgram":
            try allow(["proxy", "api"])
            guard parsed.segments.count == 2, Self.isBotToken(parsed.segments[0]), Self.isChat(parsed.segments[1]) else {
                throw ForwardTargetProblem("tgram:// needs the bot token from @BotFather and the chat, such as tgram://123456789:AAH…/987654321 (a chat id, or @channel)")
            }
            service = .telegram
            push = PushAddress(base: try base("https://api.telegram.org"), key: parsed.segments[0], chat: parsed.segments[1])
        default:
            var message = "unknown forward scheme '\(parsed.scheme)://' (known: \(Self.forwardSchemes.map { $0 + "://" }.joined(separator: ", ")))"
            if let near = Self.forwardSchemes.min(by: { editDistance($0, parsed.scheme) < editDistance($1, parsed.scheme) }),
                editDistance(near, parsed.scheme) <= 2
            {
                message += "; did you mean '\(near)://'?"
            }
            throw ForwardTargetProblem(message)
        }
        self.init(service: service, url: text, push: push, proxy: proxy)
    }

    /// `USER:PASS@HOST[:PORT]` and `to=`, `from=` (the user when it is an
    /// address, else USER@ the host without its `smtp.`: QQ Mail's 12345 at smtp.qq.com is 12345@qq.com).
    static func mailAddress(_ parsed: ForwardURL) throws(ForwardTargetProblem) -> MailAddress {
        let example = "\(parsed.scheme)://USER:PASSWORD@smtp.example.com/?to=you@example.com"
        guard parsed.segments.count == 1, let at = parsed.segments[0].lastIndex(of: "@") else {
            throw ForwardTargetProblem("\(parsed.scheme):// needs the login, the server and to=, such as \(example) (a password with @ or : in it written %40, %3A)")
        }
        let login = parsed.segments[0][..<at]
        let authority = String(parsed.segments[0][parsed.segments[0].index(after: at)...])
        guard let colon = login.firstIndex(of: ":"), let user = PercentEncoding.decode(String(login[..<colon])),
            let password = PercentEncoding.decode(String(login[login.index(after: colon)...])), !user.isEmpty, !password.isEmpty,
            let server = TargetURL("https://" + authority), !server.authority.contains("@")
        else {
            throw ForwardTargetProblem("\(parsed.scheme):// needs USER:PASSWORD@HOST[:PORT], such as \(example)")
        }
        let host = TargetURL.host(of: server.authority)
        let port = server.authority.dropFirst(host.count).dropFirst()
        let implicit = parsed.scheme == "mailtos"
        let recipients = (parsed.options["to"] ?? "").split(separator: ",").map(String.init)
        guard (1...5).contains(recipients.count), recipients.allSatisfy(isMailbox) else {
            throw ForwardTargetProblem("to= must be one to five mail addresses separated by commas, such as \(example)")
        }
        let from = parsed.options["from"] ?? (isMailbox(user) ? user : user + "@" + (host.hasPrefix("smtp.") ? String(host.dropFirst(5)) : host))
        guard isMailbox(from) else { throw ForwardTargetProblem("from= must be a mail address, got '\(from)'") }
        return MailAddress(server: (implicit ? "smtps://" : "smtp://") + host + ":" + (port.isEmpty ? (implicit ? "465" : "587") : port),
                           user: user, password: password, from: from, to: recipients)
    }

    /// `local@domain`: printable, no spaces, brackets, quotes or commas; at most 254 characters.
    static func isMailbox(_ text: String) -> Bool {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        return parts.count == 2 && !parts[0].isEmpty && parts[1].contains(".") && text.utf8.count <= 254
            && text.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F && !"<>()[],;:\"\\".unicodeScalars.contains($0) }
    }

    /// A key, token or id: 1-200 of letters, digits, `-`, `_`, `.`.
    static func isKey(_ text: String) -> Bool {
        (1...200).contains(text.count) && text.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0)
        }
    }

    /// `123456789:AAH…`: digits, a colon, then a key.
    static func isBotToken(_ text: String) -> Bool {
        let parts = text.split(separator: ":", maxSplits: 1)
        return parts.count == 2 && (1...20).contains(parts[0].count) && parts[0].allSatisfy(\.isASCII) && parts[0].allSatisfy(\.isNumber)
            && isKey(String(parts[1]))
    }

    /// A chat id (`-100123`, `987654321`) or a public channel (`@name`).
    static func isChat(_ text: String) -> Bool {
        if text.hasPrefix("@") { return isKey(String(text.dropFirst())) }
        let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        return (1...20).contains(digits.count) && digits.allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// `http://HOST:PORT` or `socks5h://[USER:PASS@]HOST:PORT`.
    static func checkedProxy(_ text: String) throws(ForwardTargetProblem) -> String {
        let problem = ForwardTargetProblem("proxy= must be http://HOST:PORT or socks5h://HOST:PORT, got '\(TargetURL.redacted(text))'")
        guard let separator = text.firstRange(of: "://"), ["http", "socks5h"].contains(text[..<separator.lowerBound].lowercased()) else {
            throw problem
        }
        let authority = String(text[separator.upperBound...].prefix { $0 != "/" })
        let host = TargetURL.host(of: authority)
        guard !host.isEmpty, text.utf8.count <= 500, text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }),
            TargetURL.hasValidPort(authority, host: host), text[separator.upperBound...].dropFirst(authority.count).allSatisfy({ $0 == "/" })
        else { throw problem }
        return text
    }
}

/// `SCHEME://SEGMENT/SEGMENT?name=value&…` as `forward =` writes it: the
/// segments are not a host and a path (a Telegram bot token has a colon),
/// the query values are percent-decoded. At most 2,000 bytes, no spaces,
/// control characters or fragment.
struct ForwardURL {
    var scheme: String
    var segments: [String]
    var options: [String: String]

    init(_ text: String) throws(ForwardTargetProblem) {
        guard text.utf8.count <= 2000, text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }), !text.contains("#"),
            let separator = text.firstRange(of: "://")
        else {
            throw ForwardTargetProblem("forward needs one URL without spaces, such as bark://DEVICE_KEY or tgram://BOT_TOKEN/CHAT_ID, got '\(TargetURL.redacted(text))'")
        }
        scheme = String(text[..<separator.lowerBound]).lowercased()
        let rest = text[separator.upperBound...]
        let question = rest.firstIndex(of: "?") ?? rest.endIndex
        segments = rest[..<question].split(separator: "/").map(String.init)
        options = [:]
        guard question < rest.endIndex else { return }
        for item in rest[rest.index(after: question)...].split(separator: "&") {
            let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(pair[0]).lowercased()
            guard pair.count == 2, let value = PercentEncoding.decode(String(pair[1])), options[name] == nil else {
                throw ForwardTargetProblem("'\(name)' in the URL's options must be name=value, once")
            }
            options[name] = value
        }
    }
}
