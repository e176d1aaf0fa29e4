/// What a target's answer means for the message and for the target's queue —
/// one verdict for the forwarding lanes and for `ccrelay relay test` alike.
public enum ForwardVerdict: Sendable, Hashable {
    /// The target took the message.
    case delivered
    /// Not now (no connection, a timeout, a 5xx, a 429, an SMTP 4xx, a
    /// service's rate limit): the message waits and is tried again.
    case retry(String)
    /// The target refuses every message (a wrong URL, key, token, chat, login
    /// or recipient): the queue waits, and the user is told what to fix.
    case refused(String)
    /// This message alone cannot go (too long, a form the service cannot
    /// take, a mail refused at its end): it is given up, the next one goes.
    case refusedForGood(String)

    /// Why it was not delivered; nil when it was.
    public var failure: String? {
        switch self {
        case .delivered: nil
        case .retry(let why), .refused(let why), .refusedForGood(let why): why
        }
    }
}
