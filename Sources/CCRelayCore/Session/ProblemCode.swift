/// The stable name of what went wrong with an exchange: `last_error_code` in
/// `ccrelay status --json` and `GetStatus` (every code is listed in the
/// README). Its raw value is the wire name.
public enum ProblemCode: String, Sendable, Hashable, CaseIterable {
    case noNetwork = "no-network"
    case connectionLost = "connection-lost"
    case timeout
    case serverError = "server-error"
    case rateLimited = "rate-limited"
    case protocolError = "protocol-error"
    case replyTooLarge = "reply-too-large"
    case serverUntrusted = "server-untrusted"
    case pinMismatch = "pin-mismatch"
    case certificateRefused = "certificate-refused"
    case certificateUnusable = "certificate-unusable"
    case certificateExpired = "certificate-expired"
    case badCredentials = "bad-credentials"
    case noPassword = "no-password"
    case accountDisabled = "account-disabled"
    case quotaExhausted = "quota-exhausted"
    case onlineElsewhere = "online-elsewhere"
    case loggedOut = "logged-out"
    case locationRequired = "location-required"
    /// No usable configuration: the daemon waits for one (state `unconfigured`).
    case unconfigured
}
