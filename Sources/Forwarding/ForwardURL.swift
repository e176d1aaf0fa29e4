import CoreVocabulary

/// `SCHEME://SEGMENT/SEGMENT?name=value&…` as `forward =` writes it: the
/// segments are not a host and a path (a Telegram bot token has a colon),
/// the query values are percent-decoded. At most 2,000 bytes, no spaces,
/// control characters or fragment. The checks its services share are here:
/// a key, a service's `api=` base, a signing secret, a proxy.
public struct ForwardURL: Sendable {
    public var scheme: String
    public var segments: [String]
    public var options: [String: String]

    public init(_ text: String) throws(ForwardTargetProblem) {
        guard text.utf8.count <= 2000, text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }), !text.contains("#"),
            let separator = text.firstRange(of: "://")
        else {
            throw ForwardTargetProblem { localize in
                TextTemplate.fill(localize("forward needs one URL without spaces, such as bark://DEVICE_KEY or tgram://BOT_TOKEN/CHAT_ID, got '%s'"),
                                  TargetURL.redacted(text, localize: localize))
            }
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
                throw ForwardTargetProblem { localize in TextTemplate.fill(localize("'%s' in the URL's options must be name=value, once"), name) }
            }
            options[name] = value
        }
    }

    /// Fails naming the first option that is not in `names`.
    func allow(_ names: Set<String>) throws(ForwardTargetProblem) {
        if let unknown = options.keys.sorted().first(where: { !names.contains($0) }) {
            throw ForwardTargetProblem { [scheme] localize in
                TextTemplate.fill(localize("%s:// does not take '%s=' (it takes: %s)"), scheme, unknown, localize.list(names.sorted()))
            }
        }
    }

    /// The one segment, a key (`problem` says which when it is not).
    func singleKey(or problem: ForwardTargetProblem) throws(ForwardTargetProblem) -> String {
        guard segments.count == 1, let key = segments.first, Self.isKey(key) else { throw problem }
        return key
    }

    /// `api=` (a mirror, or a test's recorder) in place of the service's own `standard` server.
    func apiBase(_ standard: String) throws(ForwardTargetProblem) -> String {
        guard let api = options["api"] else { return standard }
        guard let url = TargetURL(api), url.path.isEmpty || url.path == "/", url.query == nil, !url.authority.contains("@") else {
            throw ForwardTargetProblem { localize in
                TextTemplate.fill(localize("api= must be https://HOST[:PORT] (plain http only to a loopback address), got '%s'"),
                                  TargetURL.redacted(api, localize: localize))
            }
        }
        return url.scheme + "://" + url.authority
    }

    /// `secret=`: a robot's signing secret, when given (DingTalk, Feishu).
    func signingSecret() throws(ForwardTargetProblem) -> String? {
        if let secret = options["secret"], secret.isEmpty || secret.utf8.count > 256 {
            throw ForwardTargetProblem { localize in localize("secret= must be the robot's signing secret (1-256 characters)") }
        }
        return options["secret"]
    }

    /// A key, token or id: 1-200 of letters, digits, `-`, `_`, `.`.
    static func isKey(_ text: String) -> Bool {
        (1...200).contains(text.count) && text.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0)
        }
    }

    /// `proxy=`: `http://HOST:PORT` or `socks5h://[USER:PASS@]HOST:PORT`.
    static func checkedProxy(_ text: String) throws(ForwardTargetProblem) -> String {
        let problem = ForwardTargetProblem { localize in
            TextTemplate.fill(localize("proxy= must be http://HOST:PORT or socks5h://HOST:PORT, got '%s'"), TargetURL.redacted(text, localize: localize))
        }
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

    /// `limit=`: a budget.
    static func budget(_ text: String) throws(ForwardTargetProblem) -> ForwardBudget {
        guard let budget = ForwardBudget(text) else {
            throw ForwardTargetProblem { localize in
                TextTemplate.fill(localize("limit= must be N/day or N/hour (N from 1 to 1000), such as limit=5/day, got '%s'"), text)
            }
        }
        return budget
    }
}
