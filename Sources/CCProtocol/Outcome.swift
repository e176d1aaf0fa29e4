import CCRelayCore
import CurlTransport

/// Every way a CC/1 exchange can end, in the terms the state machine acts on.
public enum Outcome: Sendable, Hashable {
    /// Login succeeded.
    case loggedIn(LoginGrant)
    /// A keep-alive was accepted.
    case accepted(KeepAliveGrant)
    /// A logout was confirmed (or the session was already over).
    case loggedOutByRequest
    /// The server ended the session (401/410 on a keep-alive).
    case loggedOut(reason: String, message: String?)
    /// The campus requires a location fix with every keep-alive (428).
    case locationRequired(message: String?)
    /// Too many requests (429): wait `retryAfter` seconds when given.
    case rateLimited(retryAfter: Int?)
    /// A permanent refusal until the user acts: never retried in a loop.
    case credentialsRefused(CredentialRefusal, message: String?)
    /// A 5xx answer: transient.
    case serverError(status: Int, message: String?)
    /// The request did not get a usable answer.
    case transportFailure(TransportFailure)
}

/// Why the server refused the student's credentials.
public enum CredentialRefusal: String, Sendable, Hashable {
    case certificateRejected = "certificate_rejected"
    case badCredentials = "bad_credentials"
    case accountDisabled = "account_disabled"
    case quotaExhausted = "quota_exhausted"
    case onlineElsewhere = "online_elsewhere"
}

/// The outcome of one exchange with what is needed to log it.
public struct Exchange: Sendable {
    public var outcome: Outcome
    /// The HTTP status, or 0 when there was none.
    public var httpStatus: Int
    /// New connections libcurl opened for this exchange (0 when one was reused).
    public var connectionsOpened: Int
}
