/// The stable name of what went wrong with an exchange: `last_error_code` in
/// `ccrelay status --json` and `GetStatus` (every code is listed in
/// ccrelay(1), ERROR CODES). Its raw value is the wire name.
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
    /// A Srun portal does not know the access controller (`[srun] ac-id`), or is in trouble.
    case portalMisconfigured = "portal-misconfigured"
    /// A Srun portal asks for a picture captcha.
    case captchaRequired = "captcha-required"
    /// A Srun portal refused for a reason only campus IT can change (a binding, a plan, the kind of client).
    case portalRefused = "portal-refused"
    /// No usable configuration: the daemon waits for one (state `unconfigured`).
    case unconfigured
    /// The configuration was changed into one that cannot be used: the daemon goes on with the one it had.
    case configurationUnusable = "configuration-unusable"
}
