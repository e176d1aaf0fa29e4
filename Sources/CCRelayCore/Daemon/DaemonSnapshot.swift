import CoreVocabulary

/// What users can see of the daemon, published by `DaemonCore` whenever it
/// changes: the control API's `GetStatus` and properties, the tray and the
/// status bubble read the last one and never ask the daemon. Times are
/// instants, so that a reader says "how long until" at the moment it reads.
public struct DaemonSnapshot: Sendable, Hashable {
    public var state: DaemonState
    public var badge: BadgeState
    /// When the server logs the session out without a keep-alive (nil: no session).
    public var deadline: Instant?
    /// When the next request goes out (the snapshot's own instant while one is under way; nil: none planned).
    public var nextAttempt: Instant?
    /// The address granted outside access ("" before a login).
    public var ip: String
    public var server: String
    /// What went wrong last (nil when nothing has).
    public var problem: ProblemReport?
    /// The keep-alive interval and timeout the server asked for (zero without a configuration).
    public var interval: Duration
    public var timeout: Duration
    /// `off`, `waiting`, `ok`, or the location problem.
    public var location: String
    /// Whether traffic gets out over IPv4 and IPv6, and when that was found.
    public var outside: OutsideVerdict
    public var outside6: OutsideVerdict
    public var outsideCheckedAt: Instant?
    /// Each forwarding target's queue.
    public var forwarding: [ForwardingSummary]
    /// The newest journaled alerts, newest first (the tray lists them).
    public var recent: [TrayFacts.RecentAlert]
    /// What the portal says of the account (Srun; nil when it says nothing).
    public var account: AccountFacts?
    /// The login protocol (CC/1 keeps a deadline; a Srun portal is checked every `interval`).
    public var serverProtocol = ServerProtocol.cc1

    public init(state: DaemonState, badge: BadgeState, deadline: Instant? = nil, nextAttempt: Instant? = nil, ip: String = "",
                server: String = "", problem: ProblemReport? = nil, interval: Duration = .zero, timeout: Duration = .zero,
                location: String = "off", outside: OutsideVerdict = .off, outside6: OutsideVerdict = .off,
                outsideCheckedAt: Instant? = nil, forwarding: [ForwardingSummary] = [], recent: [TrayFacts.RecentAlert] = [],
                account: AccountFacts? = nil) {
        self.state = state
        self.badge = badge
        self.deadline = deadline
        self.nextAttempt = nextAttempt
        self.ip = ip
        self.server = server
        self.problem = problem
        self.interval = interval
        self.timeout = timeout
        self.location = location
        self.outside = outside
        self.outside6 = outside6
        self.outsideCheckedAt = outsideCheckedAt
        self.forwarding = forwarding
        self.recent = recent
        self.account = account
    }

    /// Whole seconds until the deadline at `now` (never negative), nil without a session.
    public func remaining(at now: Instant) -> Int64? { deadline.map { max(0, ($0 - now).components.seconds) } }

    /// Whole seconds until the next request at `now` (0 while one is under way), nil when none is planned.
    public func secondsToNextAttempt(at now: Instant) -> Int64? { nextAttempt.map { max(0, ($0 - now).components.seconds) } }

    /// The tray's facts at `now`.
    public func trayFacts(at now: Instant) -> TrayFacts {
        // A Srun portal keeps no deadline (the session's is how long it may go unchecked): none is shown.
        var facts = TrayFacts(
            state: state, ip: ip, remaining: serverProtocol == .srun ? nil : remaining(at: now), problem: problem?.sentence ?? "",
            unread: badge.count, urgent: badge.urgent, recent: recent)
        // The way out: either family will do.
        facts.outside = [outside, outside6].contains(.ok) ? .ok : [outside, outside6].contains(.portal) ? .portal : outside
        facts.devices = account?.devices
        return facts
    }

    /// The status bubble's facts at `now`.
    public func statusSummary(at now: Instant) -> StatusSummary {
        var summary = StatusSummary(state: state, ip: ip, remaining: remaining(at: now), unread: badge.count, problem: problem?.sentence ?? "")
        summary.problemCode = problem?.code.rawValue ?? ""
        return summary
    }
}
