/// How the pure code's texts reach the user's language: a message as
/// gettext's `gettext`, or a sentence about a count as its `ngettext`
/// (English says "1 unread alert" and "2 unread alerts"; Chinese has one form).
/// The shell passes the catalogue's; tests pass `.english`.
public struct Localizer: Sendable {
    private let text: @Sendable (String) -> String
    private let counted: @Sendable (String, String, Int) -> String

    public init(text: @escaping @Sendable (String) -> String, plural: @escaping @Sendable (String, String, Int) -> String) {
        self.text = text
        self.counted = plural
    }

    /// The texts as written: the first form for a count of 1, the second for every other.
    public static let english = Localizer(text: { $0 }, plural: { one, other, count in count == 1 ? one : other })

    /// The translation of `messageID`.
    public func callAsFunction(_ messageID: String) -> String { text(messageID) }

    /// The form of `one`/`other` for `count`, translated, with `%s` filled by the count.
    public func plural(_ one: String, _ other: String, count: Int) -> String {
        TextTemplate.fill(counted(one, other, count), "\(count)")
    }

    /// `items` as this language lists names: "a, b, c" in English, "a、b、c" in Chinese.
    public func list(_ items: [String]) -> String {
        let localize = self  // the separator's message is written as `make pot` finds it
        return items.joined(separator: localize(", "))
    }
}
