import AlertJournal
import DBus
import CCRelayCore
import CoreVocabulary

/// The names of the daemon's D-Bus API (docs/contracts.md), shared by the daemon and the CLI.
public enum ControlNames {
    public static let busName = "io.github.ccrelay.CCRelay"
    public static let path: ObjectPath = "/io/github/ccrelay/CCRelay"
    public static let interface = "io.github.ccrelay.CCRelay1"
    /// Most alerts one `ListAlerts` call returns, whatever the caller asks.
    public static let listLimit = 1000
}

/// The control API's properties, whose changes the daemon announces with `PropertiesChanged`.
public enum ControlProperty: String, Sendable, CaseIterable {
    /// The state name (`DaemonState`'s raw value).
    case state = "State"
    /// The unread count.
    case badge = "Badge"
}

/// What `GetStatus` answers (an `a{sv}`, so that it can grow): the session
/// as the daemon sees it.
public struct DaemonStatus: Sendable, Hashable {
    /// One of the state names of docs/contracts.md.
    public var state: String
    public var badge: UInt32
    /// A critical alert is among the unread ones.
    public var urgent: Bool
    /// Seconds until the server logs the session out; nil without a session.
    public var remaining: Int64?
    /// The address granted outside access ("" before a login).
    public var ip: String
    public var server: String
    /// What went wrong last, as a sentence for people ("" when nothing has).
    public var lastError: String
    /// The same as a stable code for scripts ("" when nothing has; ccrelay(1), ERROR CODES, lists them).
    public var lastErrorCode: String
    /// Seconds until the next request (0 while one is under way); nil when none is planned.
    public var nextAttempt: Int64?
    /// The keep-alive interval and timeout the server asked for (seconds).
    public var interval: UInt32
    public var timeout: UInt32
    /// `off` (not used), `waiting`, `ok`, or the problem: `denied`, `disabled`,
    /// `unavailable`, `too-coarse`, `stopped`.
    public var location: String
    /// Whether traffic gets out, IPv4 and IPv6 apart (`ok`, `portal`, `limited`, `unknown`, `off`),
    /// and when that was found (seconds since the epoch; nil: not checked).
    public var outside: String = "off"
    public var outside6: String = "off"
    public var outsideChecked: Double?
    public var version: String
    /// Each `[relay]` target's queue and last delivery (none when forwarding is off).
    public var relays: [ForwardingSummary]
    /// What the metrics need beyond the above (`metrics`; nil from a daemon without it).
    public var metrics: MetricsStatus?
    /// What the portal says of the account (a Srun portal; nil when it says nothing).
    public var account: AccountFacts?
    /// The login protocol: `cc1` or `srun`.
    public var serverProtocol = "cc1"

    public init(state: String, badge: UInt32, urgent: Bool, remaining: Int64?, ip: String, server: String,
                lastError: String, lastErrorCode: String = "", nextAttempt: Int64? = nil, interval: UInt32,
                timeout: UInt32, location: String, version: String, relays: [ForwardingSummary] = []) {
        self.state = state
        self.badge = badge
        self.urgent = urgent
        self.remaining = remaining
        self.ip = ip
        self.server = server
        self.lastError = lastError
        self.lastErrorCode = lastErrorCode
        self.nextAttempt = nextAttempt
        self.interval = interval
        self.timeout = timeout
        self.location = location
        self.version = version
        self.relays = relays
    }

    /// The `a{sv}` of `GetStatus`; `remaining` and `next_attempt` are left out when they have no value.
    public var dictionary: [String: Variant] {
        var entries: [String: Variant] = [
            "state": Variant(state), "badge": Variant(badge), "urgent": Variant(urgent), "ip": Variant(ip),
            "server": Variant(server), "last_error": Variant(lastError), "last_error_code": Variant(lastErrorCode),
            "interval": Variant(interval),
            "timeout": Variant(timeout), "location": Variant(location), "version": Variant(version),
        ]
        if let remaining { entries["remaining"] = Variant(remaining) }
        if let nextAttempt { entries["next_attempt"] = Variant(nextAttempt) }
        entries["outside"] = Variant(outside)
        entries["outside6"] = Variant(outside6)
        if let outsideChecked { entries["outside_checked"] = Variant(outsideChecked) }
        if !relays.isEmpty { entries["relay"] = Variant(relays.map(\.dictionary)) }
        if let metrics { entries["metrics"] = Variant(metrics.dictionary) }
        if let account { entries["account"] = Variant(account.dictionary) }
        entries["protocol"] = Variant(serverProtocol)
        return entries
    }

    /// Reads a `GetStatus` answer; missing or mistyped entries take neutral values.
    public init(dictionary: [String: Variant]) {
        state = dictionary["state"]?.get(String.self) ?? "unknown"
        badge = dictionary["badge"]?.get(UInt32.self) ?? 0
        urgent = dictionary["urgent"]?.get(Bool.self) ?? false
        remaining = dictionary["remaining"]?.get(Int64.self)
        ip = dictionary["ip"]?.get(String.self) ?? ""
        server = dictionary["server"]?.get(String.self) ?? ""
        lastError = dictionary["last_error"]?.get(String.self) ?? ""
        lastErrorCode = dictionary["last_error_code"]?.get(String.self) ?? ""
        nextAttempt = dictionary["next_attempt"]?.get(Int64.self)
        interval = dictionary["interval"]?.get(UInt32.self) ?? 0
        timeout = dictionary["timeout"]?.get(UInt32.self) ?? 0
        location = dictionary["location"]?.get(String.self) ?? "off"
        outside = String((dictionary["outside"]?.get(String.self) ?? "unknown").prefix(16))
        outside6 = String((dictionary["outside6"]?.get(String.self) ?? "unknown").prefix(16))
        outsideChecked = dictionary["outside_checked"]?.get(Double.self)
        version = dictionary["version"]?.get(String.self) ?? ""
        relays = (dictionary["relay"]?.get([[String: Variant]].self) ?? []).prefix(16).map(ForwardingSummary.init(dictionary:))
        metrics = dictionary["metrics"]?.get([String: Variant].self).map(MetricsStatus.init(dictionary:))
        account = dictionary["account"]?.get([String: Variant].self).map(AccountFacts.init(dictionary:))
        serverProtocol = String((dictionary["protocol"]?.get(String.self) ?? "cc1").prefix(8))
    }
}

extension AccountFacts {
    /// `GetStatus`' `account` entry (`a{sv}`): `devices` (u), `device_list` (aa{ss}: kind, address),
    /// `used_bytes`, `used_seconds`, `remain_bytes` (x), `balance` (d), `online_ip` (s) — each only when known.
    public var dictionary: [String: Variant] {
        var entries: [String: Variant] = [
            "device_list": Variant(deviceList.map { ["kind": $0.kind, "address": $0.address] }),
        ]
        if let devices { entries["devices"] = Variant(UInt32(clamping: devices)) }
        if let usedBytes { entries["used_bytes"] = Variant(usedBytes) }
        if let usedSeconds { entries["used_seconds"] = Variant(usedSeconds) }
        if let remainBytes { entries["remain_bytes"] = Variant(remainBytes) }
        if let balance { entries["balance"] = Variant(balance) }
        if let onlineIP { entries["online_ip"] = Variant(onlineIP) }
        return entries
    }

    /// Read back from `GetStatus`, bounded.
    public init(dictionary: [String: Variant]) {
        func text(_ value: String?) -> String { String((value ?? "").prefix(64)) }
        self.init(
            devices: dictionary["devices"]?.get(UInt32.self).map { Int(min($0, 100_000)) },
            deviceList: (dictionary["device_list"]?.get([[String: String]].self) ?? []).prefix(16).map {
                AccountFacts.Device(kind: text($0["kind"]), address: text($0["address"]))
            },
            usedBytes: dictionary["used_bytes"]?.get(Int64.self), usedSeconds: dictionary["used_seconds"]?.get(Int64.self),
            remainBytes: dictionary["remain_bytes"]?.get(Int64.self), balance: dictionary["balance"]?.get(Double.self).flatMap { $0.isFinite ? $0 : nil },
            onlineIP: dictionary["online_ip"]?.get(String.self).map { text($0) })
    }
}

extension ForwardingSummary {
    /// One `[relay]` target in `GetStatus`' `relay` entry (`aa{sv}`).
    public var dictionary: [String: Variant] {
        var entries: [String: Variant] = [
            "target": Variant(target), "queued": Variant(UInt32(clamping: queued)), "last_error": Variant(lastError),
        ]
        if let lastDelivered { entries["last_delivered"] = Variant(lastDelivered) }
        if let budgetLeft { entries["budget_left"] = Variant(UInt32(clamping: budgetLeft)) }
        if !held.isEmpty { entries["held"] = Variant(held) }
        return entries
    }

    /// Read back from `GetStatus`, bounded.
    public init(dictionary: [String: Variant]) {
        self.init(
            target: String((dictionary["target"]?.get(String.self) ?? "").prefix(300)),
            queued: Int(dictionary["queued"]?.get(UInt32.self) ?? 0), lastDelivered: dictionary["last_delivered"]?.get(Double.self),
            lastError: String((dictionary["last_error"]?.get(String.self) ?? "").prefix(500)),
            budgetLeft: dictionary["budget_left"]?.get(UInt32.self).map { Int(min($0, 1000)) },
            held: String((dictionary["held"]?.get(String.self) ?? "").prefix(16)))
    }
}

extension JournalEntry {
    /// One element of `ListAlerts`' `aa{sv}`.
    public var dictionary: [String: Variant] {
        var entries: [String: Variant] = [
            "id": Variant(id), "kind": Variant(kind.rawValue), "title": Variant(title), "body": Variant(body),
            "urgency": Variant(urgency.rawValue), "posted_at": Variant(postedAt), "acknowledged": Variant(acknowledged),
        ]
        if let notificationID { entries["notification_id"] = Variant(notificationID) }
        if let acknowledgedAt { entries["acknowledged_at"] = Variant(acknowledgedAt) }
        if forwarded > 0 { entries["forwarded"] = Variant(UInt32(clamping: forwarded)) }
        if forwardWaiting > 0 { entries["forward_waiting"] = Variant(UInt32(clamping: forwardWaiting)) }
        if forwardedInDigest > 0 { entries["in_digest"] = Variant(UInt32(clamping: forwardedInDigest)) }
        return entries
    }

    /// Reads one `ListAlerts` element; nil when it lacks an id or kind.
    public init?(dictionary: [String: Variant]) {
        guard let id = dictionary["id"]?.get(Int64.self), let kindName = dictionary["kind"]?.get(String.self) else {
            return nil
        }
        self.init(
            id: id, kind: AlertKind(rawValue: kindName) ?? .notice, title: dictionary["title"]?.get(String.self) ?? "",
            body: dictionary["body"]?.get(String.self) ?? "",
            urgency: dictionary["urgency"]?.get(UInt8.self).flatMap(Urgency.init(rawValue:)) ?? .normal,
            postedAt: dictionary["posted_at"]?.get(Double.self) ?? 0,
            notificationID: dictionary["notification_id"]?.get(UInt32.self),
            acknowledged: dictionary["acknowledged"]?.get(Bool.self) ?? false,
            acknowledgedAt: dictionary["acknowledged_at"]?.get(Double.self),
            forwarded: Int(dictionary["forwarded"]?.get(UInt32.self) ?? 0),
            forwardWaiting: Int(dictionary["forward_waiting"]?.get(UInt32.self) ?? 0),
            forwardedInDigest: Int(min(dictionary["in_digest"]?.get(UInt32.self) ?? 0, 16)))
    }
}

extension TimelineEntry {
    /// One element of `ListTimeline`'s `aa{sv}`.
    public var dictionary: [String: Variant] {
        ["at": Variant(at), "subject": Variant(subject.rawValue), "from": Variant(from), "to": Variant(to), "cause": Variant(cause)]
    }

    /// Reads one `ListTimeline` element, bounded; nil when it lacks a time or a known subject.
    public init?(dictionary: [String: Variant]) {
        guard let at = dictionary["at"]?.get(Double.self), at.isFinite,
            let subject = dictionary["subject"]?.get(String.self).flatMap(Subject.init(rawValue:))
        else { return nil }
        func text(_ key: String, _ limit: Int) -> String { String((dictionary[key]?.get(String.self) ?? "").prefix(limit)) }
        self.init(at: at, subject: subject, from: text("from", 32), to: text("to", 32), cause: text("cause", 500))
    }
}
