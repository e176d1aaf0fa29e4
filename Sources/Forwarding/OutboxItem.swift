import CoreVocabulary

/// One alert waiting in the outbox for a forwarding target (or delivered to it).
public struct OutboxItem: Sendable, Hashable {
    public var alertID: Int64
    /// `ForwardTarget.name`.
    public var target: String
    /// The idempotency key, the same for every target and attempt, kept across restarts.
    public var key: String
    /// Attempts begun before this one (one begun before a `kill -9` counts).
    public var attempts: Int
    public var queuedAt: Double
    public var kind: AlertKind
    public var title: String
    public var body: String
    public var urgency: Urgency
    public var postedAt: Double

    public init(alertID: Int64, target: String, key: String, attempts: Int, queuedAt: Double, kind: AlertKind, title: String,
                body: String, urgency: Urgency, postedAt: Double) {
        self.alertID = alertID
        self.target = target
        self.key = key
        self.attempts = attempts
        self.queuedAt = queuedAt
        self.kind = kind
        self.title = title
        self.body = body
        self.urgency = urgency
        self.postedAt = postedAt
    }
}
