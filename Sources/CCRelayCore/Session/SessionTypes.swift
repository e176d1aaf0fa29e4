import CoreVocabulary

/// A campus notice as the state machine sees it.
public struct NoticeInfo: Sendable, Hashable {
    public var id: String
    public var title: String
    public var body: String
    public var urgency: Urgency
    public init(id: String, title: String, body: String, urgency: Urgency) {
        self.id = id
        self.title = title
        self.body = body
        self.urgency = urgency
    }
}

/// How a login was answered (by the server or the transport), in the terms
/// the state machine acts on. The shell maps the CC/1 client's outcomes onto these.
public enum LoginAnswer: Sendable, Hashable {
    case loggedIn(interval: Int, timeout: Int, notices: [NoticeInfo])
    /// A permanent refusal: never retried until the user acts.
    case refused(CredentialProblem, message: String?)
    /// A refusal that may lift without ccrelay (a Srun portal's captcha: the
    /// user logs in once in a browser): said once, then tried again quietly
    /// every `retryAfter` seconds.
    case blocked(CredentialProblem, message: String?, retryAfter: Int)
    case rateLimited(retryAfter: Int?)
    /// 5xx, timeout, lost connection, bad reply: retried with back-off.
    case transientFailure(String)
    /// No route or no name resolution: the network is not there.
    case noNetwork
    /// The server's identity could not be verified (often a captive
    /// portal): no request was sent; retried at the back-off cap.
    case untrusted(ServerTrustProblem)
}

/// How a keep-alive was answered; as `LoginAnswer`, and the server may end the session.
public enum KeepAliveAnswer: Sendable, Hashable {
    case accepted(interval: Int?, timeout: Int?, notices: [NoticeInfo])
    /// The server ended the session (401/410).
    case loggedOut(reason: LogoutReason, message: String?)
    case refused(CredentialProblem, message: String?)
    case rateLimited(retryAfter: Int?)
    case transientFailure(String)
    case noNetwork
    case untrusted(ServerTrustProblem)
}

/// Why the server ended a session (docs/protocol.md, keep-alive errors).
public enum LogoutReason: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The deadline passed without an accepted keep-alive: won back by a login when auto-relogin is on.
    case expired
    case kicked
    case admin
    case quotaExhausted
    case onlineElsewhere
    /// The client's own logout (DELETE) was answered.
    case requested
    /// A Srun portal's check found the session gone: the portal ended it and never says why.
    case portalEnded
    /// A reason this client does not know, as the server sent it.
    case other(String)

    /// The reason as it comes on the wire.
    public init(wire: String) {
        switch wire {
        case "expired": self = .expired
        case "kicked": self = .kicked
        case "admin": self = .admin
        case "quota_exhausted": self = .quotaExhausted
        case "online_elsewhere": self = .onlineElsewhere
        case "logout": self = .requested
        case "portal_ended": self = .portalEnded
        default: self = .other(wire)
        }
    }

    public init(stringLiteral wire: String) { self.init(wire: wire) }

    public var description: String {
        switch self {
        case .expired: "expired"
        case .kicked: "kicked"
        case .admin: "admin"
        case .quotaExhausted: "quota_exhausted"
        case .onlineElsewhere: "online_elsewhere"
        case .requested: "logout"
        case .portalEnded: "portal_ended"
        case .other(let wire): wire
        }
    }
}

/// docs/protocol.md's bounds on the server's timing, applied before any
/// arithmetic sees a number: `interval` 1–3600 s, `timeout` 1–86400 s,
/// `Retry-After` 0–600 s.
public enum ServerTiming {
    public static let intervals = 1...3600
    public static let timeouts = 1...86_400
    public static let retryAfters = 0...600

    /// The keep-alive period and the timeout to follow for what the server
    /// granted, both bounded. A timeout not above the interval is followed
    /// leniently: keep-alives every `timeout / 3`.
    public static func effective(interval: Int, timeout: Int) -> (interval: Duration, timeout: Duration) {
        let interval = clamp(interval, intervals)
        let timeout = clamp(timeout, timeouts)
        guard timeout > interval else { return (.seconds(timeout) / 3, .seconds(timeout)) }
        return (.seconds(interval), .seconds(timeout))
    }

    /// The wait a 429 asks for, bounded to 10 minutes.
    public static func retryAfter(_ seconds: Int?) -> Duration { .seconds(clamp(seconds ?? 0, retryAfters)) }

    static func clamp(_ value: Int, _ range: ClosedRange<Int>) -> Int { min(max(value, range.lowerBound), range.upperBound) }
}

/// Everything that happens to a session.
public enum SessionEvent: Sendable, Hashable {
    /// The daemon started (or the user asked to log in).
    case start
    /// The daemon started and found the session of its previous run, whose
    /// deadline is `remaining` away: carry on with it (a keep-alive at once)
    /// instead of logging in again.
    case restore(RestoredSession)
    /// The timer the session armed fired.
    case timerFired
    case loginAnswered(LoginAnswer)
    case keepAliveAnswered(KeepAliveAnswer)
    /// The machine is about to sleep (logind PrepareForSleep true).
    case sleeping
    /// The machine woke up (PrepareForSleep false, or a detected jump).
    case resumed
    /// Connectivity changed (NetworkManager); `limited` is a portal or limited network.
    case connectivity(online: Bool)
    /// The user asked to log out.
    case logout
    /// The daemon is stopping.
    case stop
}

/// Everything the session asks the shell to do, in order.
public enum SessionEffect: Sendable, Hashable {
    case sendLogin(timeout: Duration)
    /// A retry of the same report reuses its `seq`.
    case sendKeepAlive(seq: UInt64, timeout: Duration)
    case sendLogout
    /// Open a fresh connection for the next request (after sleep or a network change).
    case dropConnection
    /// The one timer of the session: fire at this instant (replaces any earlier one).
    case armTimer(at: Instant)
    case cancelTimer
    case post(AlertSubject)
    case close(AlertKind)
    case stateChanged(DaemonState)
    /// Nothing more is due before sleeping: release the sleep inhibitor.
    case readyToSleep
}

/// The knobs of the state machine (from `[keepalive]` and defaults).
public struct SessionSettings: Sendable, Hashable {
    /// Warn when `remaining` falls under this without an accepted keep-alive.
    public var warnBefore: Duration = .seconds(60)
    /// Log in again by itself after an expiry.
    public var autoRelogin = true
    /// Send a logout when the daemon stops.
    public var logoutOnExit = false
    /// Campus notices are shown (`[notifications] notices`); off, they are ignored altogether.
    public var notices = true
    /// Longest a request may take.
    public var requestTimeout: Duration = .seconds(15)
    /// A request may take an interval, and at least this long when the interval is shorter.
    public var minimumRequestTimeout: Duration = .seconds(2)
    /// First retry delay; doubles per failure up to `backoffCap` (and the interval).
    public var backoffBase: Duration = .seconds(1)
    public var backoffCap: Duration = .seconds(60)
    /// Never two attempts closer than this.
    public var minimumGap: Duration = .milliseconds(500)
    /// Seed of the jitter, so that runs are reproducible.
    public var jitterSeed: UInt64 = 0x9E37_79B9_7F4A_7C15
    /// When the server ends the session by itself (a Srun portal's idle
    /// cut, quota, an admin, a newer device), log in again after this long,
    /// with auto-relogin on — unless it did so `fightLimit` times within
    /// `fightWindow` (a fight with another device): nil (CC/1) never.
    public var reloginAfterServerEnd: Duration?
    public var fightLimit = 3
    public var fightWindow: Duration = .seconds(600)

    public init() {}
}

/// A session a previous run of the daemon left behind (see `SessionEvent.restore`).
public struct RestoredSession: Sendable, Hashable {
    public var interval: Int
    public var timeout: Int
    /// Time left until the server's deadline.
    public var remaining: Duration
    /// The last report sent; the next one is `seq + 1`.
    public var seq: UInt64
    public init(interval: Int, timeout: Int, remaining: Duration, seq: UInt64) {
        self.interval = interval
        self.timeout = timeout
        self.remaining = remaining
        self.seq = seq
    }
}

/// docs/protocol.md's rule for a session token: 16–512 printable ASCII
/// characters. It goes into an HTTP header, so anything else (CR, LF,
/// spaces) could inject one; a saved token is checked like a fresh one.
public enum SessionToken {
    public static func isValid(_ token: String) -> Bool {
        (16...512).contains(token.utf8.count) && token.utf8.allSatisfy { (0x21...0x7e).contains($0) }
    }
}
