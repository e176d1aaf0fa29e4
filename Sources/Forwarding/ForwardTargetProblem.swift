import CoreVocabulary

/// Why a `[relay]` URL cannot be used, as a sentence with the fix, said in
/// the language it is shown in: `ccrelay config check` says it in the
/// user's (`sentence`), a log line and a test in English (`description`).
public struct ForwardTargetProblem: Error, Sendable, CustomStringConvertible {
    private let words: @Sendable (Localizer) -> String

    /// `words` says the problem with the localizer it is given (each message
    /// written inside `localize("…")`, where `make pot` finds it).
    public init(_ words: @escaping @Sendable (Localizer) -> String) { self.words = words }

    /// The sentence in `localize`'s language.
    public func sentence(_ localize: Localizer) -> String { words(localize) }

    public var description: String { sentence(.english) }
}
