import CoreVocabulary

/// One journaled alert on its way to a forwarding target: only what the user
/// saw (kind, title, body, urgency, when) and the host it came from. The
/// session token, the password and the certificate are not among its fields,
/// so they cannot leave the machine this way.
public struct ForwardedAlert: Sendable, Hashable {
    public var kind: AlertKind
    public var title: String
    public var body: String
    public var urgency: Urgency
    /// When it was raised, in seconds since the Unix epoch.
    public var postedAt: Double
    /// The idempotency key: one per alert, the same for every target and every attempt.
    public var key: String
    public var host: String
    /// It did not go out when raised (an attempt failed, the daemon
    /// restarted, or it waited over a minute): the message says so, with the original time.
    public var late: Bool

    /// An alert that waited longer than this in the outbox is marked late.
    public static let lateAfter: Double = 60

    public init(kind: AlertKind, title: String, body: String, urgency: Urgency, postedAt: Double, key: String, host: String,
                late: Bool) {
        self.kind = kind
        self.title = title
        self.body = body
        self.urgency = urgency
        self.postedAt = postedAt
        self.key = key
        self.host = host
        self.late = late
    }
}
