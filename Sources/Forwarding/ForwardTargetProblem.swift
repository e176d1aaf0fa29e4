/// Why a `[relay]` URL cannot be used, as a sentence with the fix.
public struct ForwardTargetProblem: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
