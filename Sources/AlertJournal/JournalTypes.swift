import CCRelayCore
import CoreVocabulary

/// One alert as the journal keeps it.
public struct JournalEntry: Sendable, Hashable {
    public var id: Int64
    public var kind: AlertKind
    public var title: String
    public var body: String
    public var urgency: Urgency
    /// When it was raised, in seconds since the Unix epoch.
    public var postedAt: Double
    /// The notification server's id for its bubble, once it answered.
    public var notificationID: UInt32?
    /// Seen by the user: clicked, dismissed, or cleared with `ccrelay badge clear`.
    public var acknowledged: Bool
    public var acknowledgedAt: Double?
    /// Relay targets it reached, and those it still waits for (`[relay]`).
    public var forwarded: Int
    public var forwardWaiting: Int
    /// Of the targets it reached, those it reached inside a digest (with other alerts, in one message).
    public var forwardedInDigest: Int

    public init(id: Int64, kind: AlertKind, title: String, body: String, urgency: Urgency, postedAt: Double,
                notificationID: UInt32? = nil, acknowledged: Bool = false, acknowledgedAt: Double? = nil,
                forwarded: Int = 0, forwardWaiting: Int = 0, forwardedInDigest: Int = 0) {
        self.id = id
        self.kind = kind
        self.title = title
        self.body = body
        self.urgency = urgency
        self.postedAt = postedAt
        self.notificationID = notificationID
        self.acknowledged = acknowledged
        self.acknowledgedAt = acknowledgedAt
        self.forwarded = forwarded
        self.forwardWaiting = forwardWaiting
        self.forwardedInDigest = forwardedInDigest
    }
}

