/// An error of ccrelay (its state file, its daemon), said to the user as it is.
public struct RelayError: Error, CustomStringConvertible, Sendable {
    public var description: String
    /// Another process holds what was needed (a locked database): trying
    /// again later may work, and nothing is wrong with the file.
    public var isBusy: Bool
    public init(_ description: String, isBusy: Bool = false) {
        self.description = description
        self.isBusy = isBusy
    }
}
