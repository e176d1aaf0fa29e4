import CoreVocabulary

/// The parts of a target URL the forwarding code needs, checked as strictly
/// as the CC/1 server's: https, or http to a loopback address only; no
/// spaces, control characters or fragment; at most 2,000 bytes.
public struct TargetURL: Hashable, Sendable {
    /// The URL as written.
    public var text: String
    public var scheme: String
    /// `host[:port]`, with any user information before it.
    public var authority: String
    public var path: String
    public var query: String?

    public init?(_ text: String) {
        guard text.utf8.count <= 2000, text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }),
            !text.contains("#"), let separator = text.firstRange(of: "://")
        else { return nil }
        self.text = text
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
    public static func host(of authority: String) -> String {
        let hostPort = authority.split(separator: "@", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        if hostPort.hasPrefix("["), let close = hostPort.firstIndex(of: "]") { return String(hostPort[...close]) }
        return String(hostPort.split(separator: ":", omittingEmptySubsequences: false).first ?? "")
    }

    /// No port, or one from 1 to 65535.
    public static func hasValidPort(_ authority: String, host: String) -> Bool {
        let hostPort = authority.split(separator: "@", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        let afterHost = hostPort.dropFirst(host.count)
        guard !afterHost.isEmpty else { return true }
        guard afterHost.hasPrefix(":"), let port = Int(afterHost.dropFirst()) else { return false }
        return (1...65535).contains(port)
    }

    public var pathSegments: [Substring] { path.split(separator: "/") }

    /// The value of `name=` in the query, if present.
    public func queryItem(_ name: String) -> String? {
        for item in (query ?? "").split(separator: "&") where item.hasPrefix(name + "=") {
            return String(item.dropFirst(name.count + 1))
        }
        return nil
    }

    /// What may be shown of a URL someone wrote (in an error, a log line, a
    /// status everyone reads): an http(s) URL's scheme and server alone
    /// (`https://ntfy.sh/…` — its path may be a topic or a token, its user
    /// information a password, its query a token); any other scheme's name
    /// alone (`bark://…` — a push URL's first segment is its key); and of
    /// text that is no URL, only its length (said in `localize`'s language).
    public static func redacted(_ text: String, localize: Localizer) -> String {
        guard let separator = text.firstRange(of: "://") else {
            return localize.plural("(%s character, not shown)", "(%s characters, not shown)", count: text.count)
        }
        let scheme = String(text[..<separator.lowerBound].prefix(16))
        let shownScheme = scheme.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "+" }
            ? scheme : localize("(a scheme)")
        guard ["http", "https", "socks5h", "socks5"].contains(scheme.lowercased()) else { return shownScheme + "://…" }
        let rest = text[separator.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let hostPort = authority.split(separator: "@", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        let printable = hostPort.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F } && hostPort.count <= 255
        let shownAuthority = printable ? (authority.contains("@") ? "…@" : "") + hostPort : "…"
        return shownScheme + "://" + shownAuthority + (authority.count < rest.count ? "/…" : "")
    }
}
