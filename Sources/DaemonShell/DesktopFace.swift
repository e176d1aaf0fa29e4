import AlertJournal
import DBus
import DesktopServices
import EventLoop
import CCRelayCore
import CoreVocabulary

/// The daemon's side of the desktop session, as its rules see it: the bus
/// face (the name, the control API and LauncherEntry objects, property
/// announcements), the notification server, the keyring. `SessionBusFace`
/// is it on the session bus; the shell's unit tests record what it is asked.
protocol DesktopFace: AnyObject {
    /// What the notification server reports (set before `start`).
    var onAlertEvent: ((Notifier.Event) -> Void)? { get set }
    /// After the session bus came back: what used the old connection starts again.
    var onReconnected: (() -> Void)? { get set }
    /// The session bus has been gone for `SessionBusFace.busGrace` (called once per loss): the session may be over.
    var onBusGone: (() -> Void)? { get set }
    /// The session-bus connection, for the Location portal (nil when there is none).
    var connection: Connection? { get }

    /// Exports the control API for `target` and the LauncherEntry (showing
    /// `target.snapshot`), follows the notification server, and claims the
    /// daemon's name; `done` hears why not, when another daemon has it.
    func start(serving target: ControlTarget, done: @escaping (BusNameError?) -> Void)
    /// What users see changed from `previous` (nil: the first publication):
    /// the properties and the badge that changed are announced, the tray refreshed.
    func publish(_ snapshot: DaemonSnapshot, previous: DaemonSnapshot?)
    func post(_ alert: Alert)
    func close(_ kind: AlertKind)
    /// The bubble an earlier run showed for `kind` (call after `start`): this run replaces or closes it.
    func adopt(_ kind: AlertKind, shownAs id: UInt32)
    /// The campus password of `user` from the keyring (nil when it has none).
    func password(user: String, completion: @escaping (Result<String?, DBusError>) -> Void)
}

/// The `DesktopFace` on the session bus: the connection (rejoined with
/// back-off when the bus restarts, everything exported and announced again),
/// the `Notifier`, the exported objects, the name.
final class SessionBusFace: DesktopFace {
    var onAlertEvent: ((Notifier.Event) -> Void)?
    var onReconnected: (() -> Void)?
    var onBusGone: (() -> Void)?
    /// How long the session bus may be away before `onBusGone` (a bus that
    /// restarts is back well within it; one whose session ended is not).
    static let busGrace: Duration = .seconds(10)
    /// When the bus went away (on the loop's clock), while it is away.
    private var lostAt: Duration?
    private var goneReported = false
    private(set) var bus: Connection
    var connection: Connection? { bus }
    /// Which bus is joined (and rejoined): the session bus, or a test's.
    private let address: Bus
    private var notifier: Notifier
    private let loop: any EventScheduler
    private let log: (String) -> Void
    private weak var target: ControlTarget?
    /// What users see, the target's (the core's) snapshot.
    private var snapshot: DaemonSnapshot { target?.snapshot ?? DaemonSnapshot(state: .offline, badge: BadgeState(count: 0, urgent: false)) }
    private var badge: BadgeState { snapshot.badge }
    private var reconnectDelay: Duration = .seconds(1)
    private var reconnectTimer: (any LoopTimer)?
    private var tray: TrayIcon?
    private var quitTimer: (any LoopTimer)?

    /// Connects to the session bus, or `address` (blocking until it says hello).
    init(loop: any EventScheduler, log: @escaping (String) -> Void, address: Bus = .session) throws(DBusError) {
        self.loop = loop
        self.log = log
        self.address = address
        bus = try Connection(bus: address, loop: loop)
        notifier = Notifier(connection: bus, log: log)
    }

    func start(serving target: ControlTarget, done: @escaping (BusNameError?) -> Void) {
        loop.preconditionIsCurrent()
        self.target = target
        exportObjects()
        BusName.claim(on: bus, stop: "systemctl --user stop ccrelay") { error in
            if error == nil {
                self.startNotifier()
                self.watchDocks()
                self.startTray()
            }
            done(error)
        }
        watchBus()
    }

    func publish(_ snapshot: DaemonSnapshot, previous: DaemonSnapshot?) {
        // The first publication is announced whole (a dock already running learns the badge).
        let change = SnapshotChange(from: previous, to: snapshot)
        if change.tray { tray?.refresh() }
        if change.badge { announceBadge(snapshot.badge) }
        if !change.properties.isEmpty { announce(change.properties) }
    }

    /// `GetStatus` now: the last snapshot, its times read at this moment.
    private func status() -> DaemonStatus? {
        guard let target else { return nil }
        return target.status(of: snapshot, at: Instant(sinceBoot: loop.now), wallClock: loop.wallClock)
    }

    /// Emits `PropertiesChanged` for the named control properties.
    private func announce(_ properties: [ControlProperty]) {
        let names = properties.map(\.rawValue)
        do {
            try bus.emitPropertiesChanged(path: ControlNames.path, interface: ControlNames.interface, changed: names)
        } catch {
            log("cannot announce \(names.joined(separator: ", ")): \(error.message)")
        }
    }

    /// Emits the LauncherEntry `Update` for `badge`.
    private func announceBadge(_ badge: BadgeState) {
        do {
            try LauncherEntry.announce(badge, on: bus)
        } catch {
            log("cannot announce the badge: \(error.message)")
        }
    }

    func post(_ alert: Alert) { notifier.post(alert) }

    func close(_ kind: AlertKind) { notifier.close(kind) }

    func adopt(_ kind: AlertKind, shownAs id: UInt32) { notifier.adopt(kind, shownAs: id) }

    func password(user: String, completion: @escaping (Result<String?, DBusError>) -> Void) {
        SecretService(connection: bus).password(user: user, completion: completion)
    }

    /// A dock that starts (or restarts) after the daemon never asks for the
    /// badge (Plank owns `com.canonical.Unity` and sends no `Query`): it is
    /// announced again whenever that name gets an owner.
    private func watchDocks() {
        _ = bus.watchName(LauncherEntry.dockName) { [weak self] owner in
            guard let self, owner != nil else { return }
            self.announceBadge(self.badge)
        }
    }

    private func startNotifier() {
        notifier.onEvent = { [weak self] event in self?.onAlertEvent?(event) }
        notifier.start()
    }

    /// The tray icon, its facts and actions from the control target.
    private func startTray() {
        let tray = TrayIcon(
            connection: bus,
            facts: { [weak self] in
                guard let self else {
                    return TrayFacts(state: .offline, ip: "", remaining: nil, problem: "", unread: 0, urgent: false, recent: [])
                }
                return self.snapshot.trayFacts(at: Instant(sinceBoot: self.loop.now))
            },
            perform: { [weak self] action in self?.perform(action) },
            activate: { [weak self] in self?.target?.request(.showStatus(setupCommand: false)) }, log: log)
        self.tray = tray
        tray.start()
    }

    private func perform(_ action: UserRequest?) {
        guard let target, let action else { return tray?.refresh() ?? () }
        if action == .quit {
            // After the host's call is answered: stopping closes the connection.
            let later = loop.makeTimer { [weak self] in self?.target?.request(.quit) }
            quitTimer = later
            later.arm(after: .zero)
        } else {
            target.request(action)
        }
        tray?.refresh()
    }

    private func exportObjects() {
        guard let target else { return }
        bus.export([ControlAPI.interface(for: target) { [weak self] in self?.status() }], at: ControlNames.path)
        bus.export([LauncherEntry.interface(current: { [weak self] in self?.badge ?? BadgeState(count: 0, urgent: false) })], at: LauncherEntry.path)
    }

    /// Rejoins a restarted session bus with back-off, then exports and announces everything again.
    private func watchBus() {
        bus.onDisconnect = { [weak self] in
            guard let self else { return }
            self.log("the session bus went away; reconnecting")
            // Alerts raised meanwhile wait, and go to the new bus's server.
            self.notifier.connectionLost()
            self.lostAt = self.loop.now
            self.goneReported = false
            self.reconnect()
        }
    }

    private func reconnect() {
        let timer = reconnectTimer ?? loop.makeTimer { [weak self] in self?.reconnectNow() }
        reconnectTimer = timer
        timer.arm(after: reconnectDelay)
    }

    private func reconnectNow() {
        do {
            let connection = try Connection(bus: address, loop: loop)
            notifier.stop()
            bus = connection
            // What waited for a server on the old bus is shown by the new bus's.
            let waiting = notifier.waitingAlerts
            notifier = Notifier(connection: connection, log: log)
            startNotifier()
            waiting.forEach(notifier.post)
            watchDocks()
            reconnectDelay = .seconds(1)
            watchBus()
            exportObjects()
            announceBadge(badge)
            announce([.badge])
            BusName.claim(on: connection, stop: "systemctl --user stop ccrelay") { [log] error in if let error { log("\(error)") } }
            tray?.start(on: connection)
            lostAt = nil
            onReconnected?()
            log("reconnected to the session bus")
        } catch {
            let away = lostAt.map { loop.now - $0 } ?? .zero
            if away >= Self.busGrace && !goneReported {
                goneReported = true
                onBusGone?()
            }
            // Back-off, but one try falls at the end of the grace period.
            reconnectDelay = min(reconnectDelay * 2, .seconds(60))
            if away < Self.busGrace { reconnectDelay = min(reconnectDelay, max(Self.busGrace - away, .milliseconds(100))) }
            log("cannot rejoin the session bus (\(error.message)); next try in \(reconnectDelay.components.seconds) s")
            reconnect()
        }
    }
}
