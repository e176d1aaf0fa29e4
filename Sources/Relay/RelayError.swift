/// An error of ccrelay (its state file, its daemon), said to the user as it is.
public struct RelayError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
