import CoreVocabulary
/// The timeline and the states in the user's language, for people: the
/// journal, `--json` and D-Bus keep the English state names and causes
/// (`TimelineCause`), which these read back (issue 33.2).
public enum TimelineText {
    /// A state's word (`online` → 在线; in English the name itself), or the name itself when it is not a state's.
    public static func state(_ wireName: String, localize: Localizer) -> String {
        switch DaemonState(rawValue: wireName) {
        case .offline?: localize("offline")
        case .loggingIn?: localize("logging-in")
        case .online?: localize("online")
        case .failing?: localize("failing")
        case .loggedOut?: localize("logged-out")
        case .noNetwork?: localize("no-network")
        case .sleeping?: localize("sleeping")
        case .unconfigured?: localize("unconfigured")
        case nil: outsideWord(wireName, localize: localize)
        }
    }

    /// An outside-access verdict's word (the timeline's `outside` entries), or the name itself.
    static func outsideWord(_ name: String, localize: Localizer) -> String {
        switch name {
        case "ok": localize("ok")
        case "portal": localize("portal")
        case "limited": localize("limited")
        case "unknown": localize("unknown")
        default: name
        }
    }

    /// A recorded cause in the user's language: each of `TimelineCause`'s
    /// sentences, its `%s` the recorded words (a code, a reason, an interface).
    public static func cause(_ recorded: String, localize: Localizer) -> String {
        for (english, translated) in zip(causes(.english), causes(localize)) {
            if let values = match(recorded, english) { return TextTemplate.fill(translated, values) }
        }
        return recorded
    }

    /// The values of `template`'s `%s` in `text`, when `text` is `template` filled.
    static func match(_ text: String, _ template: String) -> [String]? {
        let parts = template.split(separator: "%s", omittingEmptySubsequences: false).map(String.init)
        if parts.count == 1 { return text == template ? [] : nil }
        guard text.hasPrefix(parts[0]), text.hasSuffix(parts[parts.count - 1]),
            text.count >= parts[0].count + parts[parts.count - 1].count
        else { return nil }
        var rest = Substring(text.dropFirst(parts[0].count).dropLast(parts[parts.count - 1].count))
        var values: [String] = []
        for separator in parts.dropFirst().dropLast() {
            guard let range = rest.firstRange(of: separator) else { return nil }
            values.append(String(rest[..<range.lowerBound]))
            rest = rest[range.upperBound...]
        }
        values.append(String(rest))
        return values
    }

    /// `TimelineCause`'s sentences and the shell's network causes, most specific first.
    static func causes(_ localize: Localizer) -> [String] {
        [
            localize("the daemon started, carrying on with its session"), localize("the daemon started"),
            localize("a keep-alive or retry fell due"), localize("a timer"), localize("the machine went to sleep"),
            localize("the machine woke up"), localize("the network went down: %s's link is down (netlink)"),
            localize("the network went down: %s's link went down (netlink)"), localize("%s's link came back (netlink)"),
            localize("the default route changed: via %s (netlink)"), localize("NetworkManager stopped; the routes say the network is there"),
            localize("NetworkManager connected (state %s)"), localize("the network went down: NetworkManager disconnected (state %s)"), localize("the network went down"), localize("the network came back"),
            localize("the system"), localize("NetworkManager says %s"), localize("no password for the login"),
            localize("login: granted"), localize("login: %s"), localize("the user asked to log in"), localize("the user asked to log out"),
            localize("the user clicked %s"), localize("a certificate file changed"), localize("an outside-access check (%s)"),
            localize("an outside-access check"), localize("the daemon stopped"), localize("the daemon"), localize("keep-alive accepted"),
            localize("the server ended the session (%s)"), localize("keep-alive refused: %s"),
            localize("keep-alive: the server asked to slow down"), localize("keep-alive failed: %s"), localize("keep-alive: no network"),
            localize("keep-alive: the server could not be verified"),
        ]
    }
}
