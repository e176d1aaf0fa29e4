import AlertJournal
import DBus
import DesktopServices
import EventLoop
import CCRelayCore
import CoreVocabulary
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's face as a system service (`ccrelay-daemon --system`): the
/// same control API on the system bus (who may call what is the package's
/// D-Bus policy: everyone reads, root and the group `ccrelay` act), no
/// notification server, tray or dock — each alert goes to the system log
/// with a priority for its urgency (`journalctl -p crit -u ccrelay` lists
/// the logouts), besides the journal and the forwarding targets. Without a
/// keyring, a password comes from a file (the daemon reads it).
final class SystemBusFace: DesktopFace {
    var onAlertEvent: ((Notifier.Event) -> Void)?
    var onReconnected: (() -> Void)?
    var onBusGone: (() -> Void)?
    /// No Location portal outside a desktop session.
    var connection: Connection? { nil }
    private let bus: Connection
    private let loop: any EventScheduler
    private let log: (String) -> Void
    private let logAlert: (SyslogPriority, String) -> Void
    /// `io.github.ccrelay.CCRelay`, or an instance's `io.github.ccrelay.CCRelay.NAME`.
    private let busName: String
    private weak var target: ControlTarget?

    /// Connects to the system bus (`$DBUS_SYSTEM_BUS_ADDRESS`, else the standard socket).
    init(loop: any EventScheduler, instance: String? = nil, log: @escaping (String) -> Void,
         logAlert: @escaping (SyslogPriority, String) -> Void) throws(DBusError) {
        busName = SystemService.busName(instance: instance)
        self.loop = loop
        self.log = log
        self.logAlert = logAlert
        bus = try Connection(bus: .system, loop: loop)
    }

    func start(serving target: ControlTarget, done: @escaping (BusNameError?) -> Void) {
        loop.preconditionIsCurrent()
        self.target = target
        bus.export([ControlAPI.interface(for: target) { [weak self] in self?.status() }], at: ControlNames.path)
        // systemd restarts the service (Restart=always): a new process joins the new bus.
        bus.onDisconnect = { [log] in
            log("the system bus went away; exiting for systemd to start the service again")
            exit(1)
        }
        let unit = busName == ControlNames.busName ? "ccrelay" : "ccrelay@" + busName.dropFirst(ControlNames.busName.count + 1)
        BusName.claim(busName, on: bus, stop: "systemctl stop \(unit)", done: done)
    }

    func publish(_ snapshot: DaemonSnapshot, previous: DaemonSnapshot?) {
        let change = SnapshotChange(from: previous, to: snapshot)
        guard !change.properties.isEmpty else { return }
        let names = change.properties.map(\.rawValue)
        do {
            try bus.emitPropertiesChanged(path: ControlNames.path, interface: ControlNames.interface, changed: names)
        } catch {
            log("cannot announce \(names.joined(separator: ", ")): \(error.message)")
        }
    }

    private func status() -> DaemonStatus? {
        guard let target else { return nil }
        return target.status(of: target.snapshot, at: Instant(sinceBoot: loop.now), wallClock: loop.wallClock)
    }

    func post(_ alert: Alert) {
        let text = alert.body.isEmpty ? alert.title : alert.title + ": " + alert.body
        logAlert(SyslogPriority(alert.urgency), "alert \(alert.kind.rawValue): " + PrintableText.oneLine(text))
    }

    func close(_ kind: AlertKind) {}

    func adopt(_ kind: AlertKind, shownAs id: UInt32) {}

    /// No keyring here: the password comes from a systemd credential or `[auth] password-file`.
    func password(user: String, completion: @escaping (Result<String?, DBusError>) -> Void) { completion(.success(nil)) }
}

/// A syslog priority, as sd-daemon's `<N>` prefix puts it on a line of
/// standard error that journald or syslog reads.
enum SyslogPriority: Int, Sendable {
    case critical = 2
    case warning = 4
    case info = 6

    /// A critical alert is `crit`, a normal one `warning`, a low one `info`.
    init(_ urgency: Urgency) {
        switch urgency {
        case .critical: self = .critical
        case .normal: self = .warning
        case .low: self = .info
        }
    }
}
