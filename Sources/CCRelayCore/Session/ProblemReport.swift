/// What went wrong with an exchange, for people and for scripts: `code` is
/// stable (`last_error_code` in `ccrelay status --json`, every code listed
/// in ccrelay(1), ERROR CODES), `sentence` says what happened and what to do.
public struct ProblemReport: Sendable, Hashable {
    public var code: ProblemCode
    public var sentence: String
    public init(code: ProblemCode, sentence: String) {
        self.code = code
        self.sentence = sentence
    }

    /// Every code a report can carry, for ccrelay(1) and its test.
    public static let codes = ProblemCode.allCases.map(\.rawValue)
}
