/// What ccrelay's Prometheus metrics say (issue 36), as plain values: the
/// one input of `MetricsText`, so that the daemon's textfile and `ccrelay
/// metrics` (which reads the same facts over D-Bus) print the same text.
/// Times are wall-clock seconds since the Unix epoch; nil leaves a series out.
public struct MetricsFacts: Sendable, Hashable {
    /// One `[relay]` target's queue.
    public struct Forwarding: Sendable, Hashable {
        /// Its display name: service, server, a fingerprint of its secret — never the secret.
        public var target: String
        public var queued: Int
        /// Messages left in its budget's window (nil: no budget).
        public var budgetLeft: Int?

        public init(target: String, queued: Int, budgetLeft: Int?) {
            self.target = target
            self.queued = queued
            self.budgetLeft = budgetLeft
        }
    }

    public var version: String
    /// The campus protocol spoken (`ServerProtocol`: `cc1`, `srun`).
    public var protocolName: String
    /// Which daemon: `MetricsFacts.instance(system:name:)`. Every series carries it, so that
    /// the textfiles of several daemons on one box (the template's instances) never collide.
    public var instance: String
    /// A state name (`DaemonState`); one this version does not know is shown as it is.
    public var state: String
    public var stateChanged: Double?
    /// When the server ends the session without a keep-alive (nil: no session).
    public var sessionExpires: Double?
    /// Drops out of `online` by cause label (`DropCause`), from the timeline; nil: the timeline could not be read.
    public var drops: [String: Int]?
    public var alertsUnread: Int
    /// The outside-access verdicts (`OutsideVerdict` names) for IPv4 and IPv6.
    public var outside: String
    public var outside6: String
    public var forwarding: [Forwarding]
    /// When the client certificate expires (nil: none, or not looked at yet).
    public var certificateExpiry: Double?
    /// The account as the portal reports it (a Srun portal; nil for CC/1): its devices, traffic used and left.
    public var account: AccountFacts?

    public init(version: String, protocolName: String, instance: String, state: String, stateChanged: Double? = nil,
                sessionExpires: Double? = nil, drops: [String: Int]? = nil, alertsUnread: Int = 0, outside: String = "off",
                outside6: String = "off", forwarding: [Forwarding] = [], certificateExpiry: Double? = nil, account: AccountFacts? = nil) {
        self.version = version
        self.protocolName = protocolName
        self.instance = instance
        self.state = state
        self.stateChanged = stateChanged
        self.sessionExpires = sessionExpires
        self.drops = drops
        self.alertsUnread = alertsUnread
        self.outside = outside
        self.outside6 = outside6
        self.forwarding = forwarding
        self.certificateExpiry = certificateExpiry
        self.account = account
    }

    /// The `instance` label: the template instance's NAME (`ccrelay@NAME.service`),
    /// `ccrelay` for the system service (no instance may be called that), `user` for a desktop session's daemon.
    public static func instance(system: Bool, name: String?) -> String {
        guard system else { return "user" }
        return name ?? "ccrelay"
    }

    /// The same facts without what moves on its own — the drop counters, the
    /// session's expiry, which every keep-alive pushes on, and the account's
    /// traffic, which every Srun check may: a change in what is left is
    /// written at once, the rest at most once a minute.
    public var steady: MetricsFacts {
        var facts = self
        facts.drops = nil
        facts.sessionExpires = nil
        facts.account = account.map(Self.steady)
        return facts
    }

    /// An account without the figures that move as it is used (its devices stay).
    public static func steady(_ account: AccountFacts) -> AccountFacts {
        var steady = account
        steady.usedBytes = nil
        steady.usedSeconds = nil
        steady.remainBytes = nil
        steady.balance = nil
        return steady
    }
}
