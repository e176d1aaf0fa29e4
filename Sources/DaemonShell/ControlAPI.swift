import AlertJournal
import DBus
import DesktopServices
import CCRelayCore
import CoreVocabulary

/// What the control API, the tray and the bubbles ask of the daemon; called
/// on the daemon's loop. What it shows (the status, the properties) is not
/// asked: the face keeps the snapshot the daemon last published.
protocol ControlTarget: AnyObject {
    /// What users see: the one snapshot, the core's.
    var snapshot: DaemonSnapshot { get }
    /// What the user asked (`UserRequest`: a D-Bus method, the tray's menu), for the core to handle.
    func request(_ request: UserRequest)
    /// `request(.clearBadge)`, answering how many alerts were unread; fails
    /// (naming the problem) when the journal cannot be used.
    func clearBadge() throws(DBusError) -> UInt32
    /// The newest alerts; fails (naming the problem) when the journal cannot be read.
    func journal(limit: Int) throws(DBusError) -> [JournalEntry]
    /// The timeline from `since` (seconds since the epoch), oldest first, after the state when it began; fails like `journal`.
    func timeline(since: Double) throws(DBusError) -> [TimelineEntry]
    /// This program's version, for `GetStatus`.
    var version: String { get }
    /// `GetStatus`' `metrics` entry for `snapshot` at `now` (nil: none).
    func metricsStatus(of snapshot: DaemonSnapshot, at now: Instant) -> MetricsStatus?
}

extension ControlTarget {
    func metricsStatus(of snapshot: DaemonSnapshot, at now: Instant) -> MetricsStatus? { nil }

    /// What `GetStatus` answers for `snapshot`, read at `now` (`wallClock` the same moment's wall time).
    func status(of snapshot: DaemonSnapshot, at now: Instant, wallClock: Double) -> DaemonStatus {
        var status = DaemonStatus(snapshot, version: version, at: now, wallClock: wallClock)
        status.metrics = metricsStatus(of: snapshot, at: now)
        return status
    }
}

/// `io.github.ccrelay.CCRelay1` at `/io/github/ccrelay/CCRelay` (docs/contracts.md):
/// `GetStatus`, `ClearBadge`, `Login`, `Logout`, `ListAlerts`, `ListTimeline`, `ShowStatus`, and the
/// properties `State` and `Badge`, whose changes the daemon announces with
/// `PropertiesChanged`.
enum ControlAPI {
    /// The interface for `target`, showing what `status()` says (the last published snapshot, read now).
    static func interface(for target: ControlTarget, status: @escaping () -> DaemonStatus?) -> Interface {
        // The target is held weakly: the bus connection must not keep the daemon alive.
        weak let target = target
        func daemon() throws(DBusError) -> ControlTarget {
            guard let target else { throw DBusError(.failed, "the daemon is stopping") }
            return target
        }
        return Interface(
            name: ControlNames.interface,
            methods: [
                .init("GetStatus", output: "a{sv}") { _ throws(DBusError) in
                    guard let status = status() else { throw DBusError(.failed, "the daemon is stopping") }
                    return [status.dictionary.dbusValue]
                },
                .init("ClearBadge", output: "u") { _ throws(DBusError) in [.uint32(try daemon().clearBadge())] },
                .init("Login") { _ throws(DBusError) in
                    try daemon().request(.login)
                    return []
                },
                .init("Logout") { _ throws(DBusError) in
                    try daemon().request(.logout)
                    return []
                },
                .init("ShowStatus") { _ throws(DBusError) in
                    try daemon().request(.showStatus(setupCommand: false))
                    return []
                },
                .init("ListAlerts", input: "u", output: "aa{sv}") { message throws(DBusError) in
                    try message.expect("u")
                    let limit = min(Int(try message.argument(0, as: UInt32.self)), ControlNames.listLimit)
                    return [try daemon().journal(limit: limit).map(\.dictionary).dbusValue]
                },
                // The system service's timeline, for `ccrelay --system timeline` and doctor: only the daemon opens its journal.
                .init("ListTimeline", input: "d", output: "aa{sv}") { message throws(DBusError) in
                    try message.expect("d")
                    let since = try message.argument(0, as: Double.self)
                    guard since.isFinite else { throw DBusError(.invalidArgs, "since must be a time") }
                    return [try daemon().timeline(since: since).map(\.dictionary).dbusValue]
                },
            ],
            properties: [
                .init(ControlProperty.state.rawValue, signature: "s") { .string(status()?.state ?? DaemonState.offline.rawValue) },
                .init(ControlProperty.badge.rawValue, signature: "u") { .uint32(status()?.badge ?? 0) },
            ])
    }
}
