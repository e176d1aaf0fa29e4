/// An error of the alert store (alerts.db and its SQLite), said to the user as it is.
public struct StoreError: Error, CustomStringConvertible, Sendable {
    /// What kind of failure it is, which decides what to do about it.
    public enum Cause: Sendable, Hashable {
        /// Another process holds what was needed (a locked database): trying
        /// again later may work, and nothing is wrong with the file.
        case busy
        /// The disk is full, read-only or failing, or the file cannot be
        /// opened now: keep the file, go on without it, try again later.
        case unavailable
        /// The file is damaged or belongs to another program: only this
        /// justifies moving it aside.
        case damaged
        case other
    }

    public var description: String
    public var cause: Cause
    public init(_ description: String, cause: Cause = .other) {
        self.description = description
        self.cause = cause
    }
}
