import CoreVocabulary
import Forwarding

/// Everything that happens to the daemon, as `DaemonCore` hears it: the
/// shell reads its ports (the CC/1 client, the journal, the desktop, the
/// files, logind and NetworkManager) and says what they said in these terms.
public enum DaemonEvent: Sendable, Hashable {
    /// The daemon has its name on the bus: start (log in, carry on, or wait for a configuration).
    /// (Boxed, as `configurationChanged`: their payloads inline would make every event, copied at each step, as large.)
    indirect case started(DaemonStart)
    /// One of the core's timers fired; the sleep clock (CLOCK_BOOTTIME minus CLOCK_MONOTONIC) as it reads now.
    case timerFired(DaemonTimer, sleptSinceBoot: Duration)
    /// logind: `.sleeping`, `.resumed` (the shell's network watchers say `.network`).
    case system(SessionEvent)
    /// The network went down, came back or took another way out (the
    /// session's `.connectivity`); `why` says what and who saw it, for the
    /// timeline ("wlan0's link went down (netlink)").
    case network(online: Bool, why: String)
    /// NetworkManager's own check of the way out (its `Connectivity`).
    case networkConnectivity(NetworkConnectivity)
    /// A password login found no password for `user` where it looked.
    case passwordMissing(user: String, place: PasswordPlace)
    case loginAnswered(LoginResult)
    case keepAliveAnswered(KeepAliveResult)
    /// The logout went out and was answered (or failed): the exchange is over.
    case logoutAnswered
    /// The configuration file changed, and what the whole check made of it.
    indirect case configurationChanged(ConfigurationReading)
    /// A certificate, key or CA file the configuration names changed.
    case credentialFileChanged(path: String)
    /// This program's file was replaced by another executable one (an upgrade).
    case programReplaced
    /// The daily look at the certificate: how long until it expires.
    case certificateInspected(secondsUntilExpiry: Int64)
    /// The location source reported.
    case location(LocationReport<LocationFix>)
    /// An outside-access check's report.
    case outsideChecked(OutsideReport)
    /// The location source had to go (the bus it used came back anew): start one again if needed.
    case locationSourceLost
    /// The journal after a change: the badge and the newest alerts.
    case journalRead(badge: BadgeState, recent: [TrayFacts.RecentAlert])
    /// An acknowledgement the core asked for was carried out: how many alerts
    /// it marked read, and the kinds left with nothing unread.
    case acknowledged(Acknowledgement, count: Int, nothingUnread: [AlertKind])
    case bubble(BubbleEvent)
    /// Whether alerts the journal could not take (a full disk) wait in memory now; said when it changes.
    case journalKeptOut(Bool)
    /// The forwarding queues after a change.
    case forwarding([ForwardingSummary])
    /// What the forwarding lanes heard (the outbox read, a target's answer, a lane's timer; new alerts queued).
    case forward(ForwarderEvent)
    case user(UserRequest)
    /// logind says the desktop session closed.
    case desktopSessionClosed
    /// The session bus has stayed away `for` its grace period; `keeper`: who
    /// says when the desktop session ends instead (nil: nobody can).
    case sessionBusGone(for: Duration, keeper: SessionKeeper?)
    /// The daemon is stopping (SIGTERM, SIGINT).
    case stop
}

/// Where a password login looks for the campus password.
public enum PasswordPlace: Sendable, Hashable {
    /// The desktop's keyring (Secret Service).
    case keyring
    /// The file `[auth] password-file` names, or the systemd credential; why it cannot be used.
    case file(problem: String)
    /// The system service with neither: a credential or a password file is needed.
    case none
}

/// What the user asked — one vocabulary for the D-Bus methods, the tray
/// menu and the bubbles' actions, each handled by the core.
public enum UserRequest: Sendable, Hashable {
    case login
    case logout
    /// Clear Badge: every unread alert read.
    case clearBadge
    case acknowledge(alertID: Int64)
    /// The status bubble; `setupCommand`: with the command that sets ccrelay up.
    case showStatus(setupCommand: Bool)
    case setUp
    /// Why the session changed: the timeline, in a terminal.
    case showTimeline
    case quit
}

/// What the notification server reported of a bubble.
public enum BubbleEvent: Sendable, Hashable {
    /// The server showed it with this id.
    case shown(AlertKind, id: UInt32)
    /// An action (or the body) was clicked.
    case clicked(AlertKind, action: String)
    /// The user closed it.
    case dismissed(AlertKind)
}

/// Alerts to mark read in the journal.
public enum Acknowledgement: Sendable, Hashable {
    /// What they said is over (the daemon's own finding): those of `kind`
    /// raised before `postedBefore` (wall clock, seconds since the epoch; nil: all).
    case over(AlertKind, postedBefore: Double?)
    /// The user saw the bubble of `kind` (clicked or dismissed it).
    case seen(AlertKind)
    /// The user acknowledged one alert (the tray's list).
    case seenAlert(Int64)
    /// Clear badge: every unread alert.
    case all
}

/// Who ends the daemon with the desktop session, when the session bus cannot say.
public enum SessionKeeper: String, Sendable, Hashable {
    /// systemd stops the user unit.
    case systemd
    /// logind says when the session closes.
    case logind
}

/// The core's timers (the watchdog and the daily certificate look are the shell's periodic work).
public enum DaemonTimer: Sendable, Hashable, CaseIterable {
    /// The session's one timer (CLOCK_BOOTTIME).
    case session
    /// Certificate and key are often replaced one after the other: a second of quiet first.
    case credentialFilesQuiet
    /// dpkg writes the new program, then renames it: a second of quiet first.
    case programQuiet
    /// The next outside-access check (`OutsideAccess`).
    case outsideCheck
}

/// What the shell knows when the daemon starts.
public struct DaemonStart: Sendable, Hashable {
    /// The wall clock now (seconds since the epoch): alerts raised before it are earlier runs'.
    public var wallClock: Double
    /// The sleep clock now (see `DaemonEvent.timerFired`).
    public var sleptSinceBoot: Duration
    /// The newest journaled alerts, newest first.
    public var journal: [JournaledAlert]
    /// The badge, and the newest alerts as the tray lists them.
    public var badge: BadgeState
    public var recent: [TrayFacts.RecentAlert]
    /// The previous run's session, when it can be carried on.
    public var carriedOn: CarriedSession?
    /// Without a configuration file: whether setup was offered already (at an earlier login).
    public var setupOffered: Bool

    public init(wallClock: Double, sleptSinceBoot: Duration = .zero, journal: [JournaledAlert] = [],
                badge: BadgeState = BadgeState(count: 0, urgent: false), recent: [TrayFacts.RecentAlert] = [],
                carriedOn: CarriedSession? = nil, setupOffered: Bool = false) {
        self.wallClock = wallClock
        self.sleptSinceBoot = sleptSinceBoot
        self.journal = journal
        self.badge = badge
        self.recent = recent
        self.carriedOn = carriedOn
        self.setupOffered = setupOffered
    }
}

/// One journaled alert, as the core needs it at start.
public struct JournaledAlert: Sendable, Hashable {
    public var kind: AlertKind
    public var body: String
    public var unread: Bool
    /// The notification server's id for its bubble, when it answered one.
    public var notificationID: UInt32?

    public init(kind: AlertKind, body: String, unread: Bool, notificationID: UInt32?) {
        self.kind = kind
        self.body = body
        self.unread = unread
        self.notificationID = notificationID
    }
}

/// A session of the previous run whose deadline has not passed.
public struct CarriedSession: Sendable, Hashable {
    public var token: String
    public var ip: String
    public var session: RestoredSession

    public init(token: String, ip: String, session: RestoredSession) {
        self.token = token
        self.ip = ip
        self.session = session
    }
}

/// The configuration file, checked completely (syntax, values, permissions,
/// the certificate and key, the CA file).
public struct ConfigurationReading: Sendable, Hashable {
    /// The configuration, when it can be used.
    public var usable: Configuration?
    /// Every problem, with file and line.
    public var problems: [ConfigurationIssue]
    /// Whether there is a file at all (a fresh install has none).
    public var exists: Bool
    /// The certificate, key and CA files the file names, when it reads that far.
    public var credentialFiles: [String]

    public init(usable: Configuration?, problems: [ConfigurationIssue], exists: Bool, credentialFiles: [String]) {
        self.usable = usable
        self.problems = problems
        self.exists = exists
        self.credentialFiles = credentialFiles
    }

    /// A file that can be used as it is.
    public static func usable(_ configuration: Configuration) -> ConfigurationReading {
        ConfigurationReading(
            usable: configuration, problems: [], exists: true,
            credentialFiles: [configuration.certificate, configuration.key, configuration.caFile].compactMap { $0 })
    }
}

/// A login's exchange as the core needs it.
public struct LoginResult: Sendable, Hashable {
    /// What the server granted, when it logged the client in.
    public var grant: Grant?
    public var problem: ProblemReport?
    /// Malformed notices dropped from the reply.
    public var droppedNotices: Int
    public var answer: LoginAnswer
    /// What the portal says of the account, when it says (Srun).
    public var account: AccountFacts?

    public struct Grant: Sendable, Hashable {
        public var token: String
        public var ip: String
        public var location: ServerLocationPolicy
        public init(token: String, ip: String, location: ServerLocationPolicy) {
            self.token = token
            self.ip = ip
            self.location = location
        }
    }

    public init(grant: Grant?, problem: ProblemReport?, droppedNotices: Int, answer: LoginAnswer, account: AccountFacts? = nil) {
        self.grant = grant
        self.problem = problem
        self.droppedNotices = droppedNotices
        self.answer = answer
        self.account = account
    }
}

/// A keep-alive's exchange as the core needs it.
public struct KeepAliveResult: Sendable, Hashable {
    public var problem: ProblemReport?
    public var droppedNotices: Int
    /// Whether the server answered 428 (location required); nil when it did not answer.
    public var locationRejected: Bool?
    public var answer: KeepAliveAnswer
    /// What the portal says of the account, when it says (Srun).
    public var account: AccountFacts?

    public init(problem: ProblemReport?, droppedNotices: Int, locationRejected: Bool?, answer: KeepAliveAnswer, account: AccountFacts? = nil) {
        self.problem = problem
        self.droppedNotices = droppedNotices
        self.locationRejected = locationRejected
        self.answer = answer
        self.account = account
    }
}

/// One forwarding target's queue, for the status.
public struct ForwardingSummary: Sendable, Hashable {
    /// The target without its secrets.
    public var target: String
    public var queued: Int
    /// When it last took an alert (seconds since the epoch).
    public var lastDelivered: Double?
    /// Why the last attempt failed ("" when it did not).
    public var lastError: String
    /// Messages left in its budget's window (nil: no budget).
    public var budgetLeft: Int?
    /// Why alerts wait for it though it could take them (`HoldReason`: quiet-hours, budget, repeat; "" when none do).
    public var held: String

    public init(target: String, queued: Int, lastDelivered: Double?, lastError: String, budgetLeft: Int? = nil, held: String = "") {
        self.target = target
        self.queued = queued
        self.lastDelivered = lastDelivered
        self.lastError = lastError
        self.budgetLeft = budgetLeft
        self.held = held
    }
}
