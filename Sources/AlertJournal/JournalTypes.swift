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

/// What the daemon needs to carry on a CC/1 session after a restart without
/// logging in again: only used while the server's deadline has not passed.
/// The token is a secret: it lives only in the 0600 store and is never logged.
public struct SessionSnapshot: Sendable, Hashable, CustomStringConvertible {
    /// The server URL and account it belongs to; another configuration does not reuse it.
    public var server: String
    public var account: String
    public var token: String
    public var ip: String
    public var interval: Int
    public var timeout: Int
    /// The last report the server accepted.
    public var seq: UInt64
    /// When the server logs the session out without a keep-alive, in seconds since the Unix epoch.
    public var deadline: Double

    public init(server: String, account: String, token: String, ip: String, interval: Int, timeout: Int, seq: UInt64,
                deadline: Double) {
        self.server = server
        self.account = account
        self.token = token
        self.ip = ip
        self.interval = interval
        self.timeout = timeout
        self.seq = seq
        self.deadline = deadline
    }

    /// Why this snapshot (read back from the store) cannot be used at wall
    /// time `now`, or nil when it can: it is checked like network input.
    public func problem(now: Double) -> String? {
        guard SessionToken.isValid(token) else { return "its token is not a valid CC/1 token" }
        guard ServerTiming.intervals.contains(interval), ServerTiming.timeouts.contains(timeout) else {
            return "its interval \(interval) or timeout \(timeout) is out of bounds"
        }
        guard seq <= 1 << 53 else { return "its seq \(seq) is out of bounds" }
        guard deadline.isFinite, deadline - now <= Double(timeout) + 60 else {
            return "its deadline \(deadline) is not within its timeout from now"
        }
        guard ip.utf8.count <= 64, ip.utf8.allSatisfy({ (0x20...0x7e).contains($0) }) else { return "its address is not printable" }
        return nil
    }

    public var description: String {
        "SessionSnapshot(server: \(server), account: \(account), token: <redacted>, ip: \(ip), seq: \(seq), deadline: \(deadline))"
    }
}
