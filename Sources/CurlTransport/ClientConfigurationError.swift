/// A configuration the client refuses, with the reason and the fix.
public struct ClientConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    /// The configuration key at fault (`group.key`, such as `auth.key`), so
    /// that the message can name its line.
    public var key: String?
    public init(_ message: String, key: String? = nil) {
        self.message = message
        self.key = key
    }
    public var description: String { message }
}
