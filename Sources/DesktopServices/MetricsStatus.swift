import DBus
import CCRelayCore

/// What the daemon's metrics need beyond the rest of `GetStatus` (its
/// `metrics` entry, an `a{sv}`; the protocol and the account are `GetStatus`'
/// own): the daemon's `instance` label, the times it keeps, the drops from
/// its timeline, and whether its textfile can be written. `ccrelay metrics` prints `MetricsFacts(status:)` of it, the same
/// text the daemon writes.
public struct MetricsStatus: Sendable, Hashable {
    /// The `instance` label (`MetricsFacts.instance(system:name:)`).
    public var instance: String
    /// Seconds since the epoch (nil: not known).
    public var stateChanged: Double?
    public var sessionExpires: Double?
    public var certificateExpiry: Double?
    /// Drops out of `online` by cause label (nil: the timeline could not be read).
    public var drops: [String: Int]?
    /// `[metrics] textfile` ("" when off), and why it cannot be written ("" when it can, or is not tried yet).
    public var textfile: String
    public var problem: String

    public init(instance: String, stateChanged: Double? = nil, sessionExpires: Double? = nil, certificateExpiry: Double? = nil,
                drops: [String: Int]? = nil, textfile: String = "", problem: String = "") {
        self.instance = instance
        self.stateChanged = stateChanged
        self.sessionExpires = sessionExpires
        self.certificateExpiry = certificateExpiry
        self.drops = drops
        self.textfile = textfile
        self.problem = problem
    }

    /// The `a{sv}`; the times and drops are left out when unknown.
    public var dictionary: [String: Variant] {
        var entries: [String: Variant] = [
            "instance": Variant(instance), "textfile": Variant(textfile), "problem": Variant(problem),
        ]
        if let stateChanged { entries["state_changed"] = Variant(stateChanged) }
        if let sessionExpires { entries["session_expires"] = Variant(sessionExpires) }
        if let certificateExpiry { entries["certificate_expiry"] = Variant(certificateExpiry) }
        if let drops { entries["drops"] = Variant(drops.mapValues { UInt32(clamping: $0) }) }
        return entries
    }

    /// Reads it back, bounded: a daemon's answer is not trusted to be small.
    public init(dictionary: [String: Variant]) {
        func text(_ key: String, _ limit: Int) -> String { String((dictionary[key]?.get(String.self) ?? "").prefix(limit)) }
        func time(_ key: String) -> Double? { dictionary[key]?.get(Double.self).flatMap { $0.isFinite ? $0 : nil } }
        instance = text("instance", 64)
        textfile = text("textfile", 1024)
        problem = text("problem", 500)
        stateChanged = time("state_changed")
        sessionExpires = time("session_expires")
        certificateExpiry = time("certificate_expiry")
        drops = dictionary["drops"]?.get([String: UInt32].self).map { counts in
            Dictionary(uniqueKeysWithValues: counts.sorted { $0.key < $1.key }.prefix(64).map { (String($0.key.prefix(32)), Int($0.value)) })
        }
    }
}

extension MetricsFacts {
    /// The facts of a `GetStatus` answer: what the daemon's textfile holds and `ccrelay metrics` prints
    /// (no `metrics` entry — an older daemon's — leaves its times and drops out).
    public init(status: DaemonStatus) {
        let metrics = status.metrics
        self.init(
            version: status.version, protocolName: status.serverProtocol, instance: metrics?.instance ?? "",
            state: status.state, stateChanged: metrics?.stateChanged, sessionExpires: metrics?.sessionExpires, drops: metrics?.drops,
            alertsUnread: Int(status.badge), outside: status.outside, outside6: status.outside6,
            forwarding: status.relays.map { Forwarding(target: $0.target, queued: $0.queued, budgetLeft: $0.budgetLeft) },
            certificateExpiry: metrics?.certificateExpiry, account: status.account)
    }
}
