import CoreVocabulary
import Forwarding

/// Everything `DaemonCore` asks of the shell, in order. The shell carries
/// each out through its ports and reports what came of it as a `DaemonEvent`.
public enum DaemonEffect: Sendable, Hashable {
    /// Log in; a password login first looks for `user`'s password in `passwordFrom`, in order (the first there is used).
    case sendLogin(user: String?, passwordFrom: [PasswordSource], timeout: Duration)
    case sendKeepAlive(token: String, seq: UInt64, fix: LocationFix?, timeout: Duration)
    case sendLogout(token: String, timeout: Duration)
    /// Open a fresh connection for the next request.
    case dropConnection
    case arm(DaemonTimer, at: Instant)
    case cancel(DaemonTimer)
    /// Journal these alerts, all in one transaction (and queue those to forward); then read the journal.
    case record([JournalItem])
    /// Show this bubble (replacing the one of its kind).
    case show(Alert)
    case close(AlertKind)
    /// The bubble an earlier run showed for `kind` is this run's to replace or close.
    case adopt(AlertKind, id: UInt32)
    /// Remember the bubble's id with the newest alert of its kind.
    case rememberBubble(AlertKind, id: UInt32)
    /// Mark alerts read; the shell answers with `.acknowledged`, then reads the journal.
    case acknowledge(Acknowledgement)
    /// Record a change in the timeline (the shell stamps it with the wall clock).
    case timeline(TimelineEntry)
    /// Save the live session (nil: forget it), so that a restart carries on with it.
    case saveSession(SessionRecord?)
    /// What users can see changed: the faces show this from now on.
    /// (`previous`: what was published before, nil the first time; the core keeps the one snapshot, `published`.
    /// Boxed: two snapshots inline would make every effect, copied at each step, ten times its size.)
    indirect case publish(DaemonSnapshot, previous: DaemonSnapshot?)
    case log(String)
    /// A systemd notification (`READY=1`, `STATUS=…`, `STOPPING=1`).
    case notifySystemd(String)
    /// Nothing more is due before sleeping: release logind's sleep inhibitor.
    case releaseSleepLock
    /// What the forwarding lanes ask (`Forwarder`): read an outbox, post, arm a lane's timer, mark what came of it.
    case forward(ForwarderEffect)
    /// Check outside access (IPv4 and IPv6); the shell answers with `.outsideChecked`.
    case checkOutside
    case startLocationSource
    case stopLocationSource
    /// Watch these files (the configuration first); changes come back as events.
    case watch([String])
    /// Check the configuration file again (it reports back with `.configurationChanged`).
    case checkConfiguration
    /// Remember that setup was offered (a fresh install says so once).
    case rememberSetupOffered
    /// Open `ccrelay setup --edit` in a terminal (or, without one, the status bubble says the command).
    case openSetup
    /// `ccrelay timeline` in a terminal (the status bubble without one).
    case openTimeline
    /// Run this program anew (the same process), carrying on with the session.
    case restart
    /// Stop (logging out when configured to) and exit.
    case end
}

extension DaemonEffect {
    /// Whether carrying it out changes the journal (the shell then reads it and says `.journalRead`).
    var changesTheJournal: Bool {
        switch self {
        case .record, .acknowledge: true
        default: false
        }
    }
}

/// One alert to journal; a campus notice's id is remembered as seen with it.
public struct JournalItem: Sendable, Hashable {
    public var alert: Alert
    public var notice: String?
    public init(alert: Alert, notice: String? = nil) {
        self.alert = alert
        self.notice = notice
    }
}

/// The live session as it is saved: enough to carry on after a restart.
public struct SessionRecord: Sendable, Hashable {
    public var token: String
    public var ip: String
    public var interval: Int
    public var timeout: Int
    /// The last report sent.
    public var seq: UInt64
    /// Time left until the server's deadline.
    public var remaining: Duration

    public init(token: String, ip: String, interval: Int, timeout: Int, seq: UInt64, remaining: Duration) {
        self.token = token
        self.ip = ip
        self.interval = interval
        self.timeout = timeout
        self.seq = seq
        self.remaining = remaining
    }

    /// What a keep-alive does not change: the row is written again only when these do.
    var facts: [String] { [token, String(interval), String(timeout)] }
}
