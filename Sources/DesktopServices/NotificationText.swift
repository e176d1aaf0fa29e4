/// Prepares text for `org.freedesktop.Notifications.Notify`: strips what
/// D-Bus cannot carry, caps the length, and escapes markup where the server
/// would otherwise interpret it.
enum NotificationText {
    /// Longest summary sent, in characters.
    static let titleLimit = 120
    /// Longest body sent, in characters (a campus notice may be 1,000).
    static let bodyLimit = 1_000

    static func summary(_ title: String) -> String {
        cap(clean(title), titleLimit)
    }

    /// The body, escaped when the server advertises `body-markup`.
    static func body(_ text: String, serverParsesMarkup: Bool) -> String {
        let capped = cap(clean(text), bodyLimit)
        return serverParsesMarkup ? escapeMarkup(capped) : capped
    }

    /// Escapes the characters that start markup: `&`, `<` and `>`.
    static func escapeMarkup(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            default: result.append(character)
            }
        }
        return result
    }

    /// Removes NUL (which D-Bus strings cannot hold).
    private static func clean(_ text: String) -> String {
        text.contains("\0") ? String(text.unicodeScalars.filter { $0 != "\0" }.map(Character.init)) : text
    }

    private static func cap(_ text: String, _ limit: Int) -> String {
        guard text.count > limit else { return text }
        return String(text.prefix(limit - 1)) + "…"
    }
}
