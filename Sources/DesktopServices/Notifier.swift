import DBus
import EventLoop
import CCRelayCore
import CoreVocabulary

/// A client of the desktop's notification server
/// (`org.freedesktop.Notifications`) that shows one bubble per alert kind.
///
/// - It reads the server's capabilities and identity, and reads them again
///   whenever another process takes over the name.
/// - Each kind has one slot holding the id the server returned; a new alert
///   of that kind replaces the bubble (`replaces_id`). Ids are never invented
///   and are forgotten when the server changes.
/// - While no server owns the name, alerts wait (the newest per kind) and are
///   delivered when one appears. When the name is activatable (XFCE, MATE
///   and UKUI start their servers on demand), the first waiting alert starts
///   it through the bus; otherwise each is logged once meanwhile.
/// - Signals are handled only for ids this notifier owns. A close it asked
///   for itself is reported as such whatever reason the server gives (UKUI
///   reports it as dismissed by the user, which would acknowledge the alert).
/// - A server that answers id 0 has shown the bubble without an id: it
///   counts as delivered, and cannot be replaced or closed.
///
/// Confinement (why `@unchecked Sendable` is sound): all state is used only on
/// the connection's loop; every public method must be called there.
public final class Notifier: @unchecked Sendable {
    public static let busName = "org.freedesktop.Notifications"
    public static let path: ObjectPath = "/org/freedesktop/Notifications"
    public static let interface = "org.freedesktop.Notifications"

    /// What the server says about itself.
    public struct ServerInfo: Sendable, Hashable {
        public var name: String
        public var vendor: String
        public var version: String
        public var specificationVersion: String
        public var capabilities: [String]
        /// The server's unique bus name.
        public var owner: String

        public func supports(_ capability: String) -> Bool { capabilities.contains(capability) }
    }

    /// Why the server closed a bubble (`NotificationClosed`).
    public enum CloseReason: UInt32, Sendable {
        case expired = 1
        case dismissed = 2
        case closedByCall = 3
        case undefined = 4
    }

    /// What happened to the alerts, reported on the connection's loop.
    public enum Event: Sendable {
        case serverChanged(ServerInfo?)
        /// The alert is waiting for a notification server.
        case queued(AlertKind)
        case delivered(AlertKind, id: UInt32)
        case failed(AlertKind, DBusError)
        case actionInvoked(AlertKind, key: String, activationToken: String?)
        case closed(AlertKind, CloseReason)
    }

    /// Receives every event; set before `start()`.
    public var onEvent: ((Event) -> Void)?
    /// The server now answering, once its capabilities are known.
    public private(set) var server: ServerInfo?

    private let connection: Connection
    private let appName: String
    private let appIcon: String
    private let desktopEntry: String
    private let log: (String) -> Void

    /// The slots, what waits, whose ids, which closes: the rules, apart from D-Bus.
    private var book = NotificationSlots()
    private var owner: String?
    /// False until the bus has said whether anyone owns the name.
    private var ownerKnown = false
    /// The bus can start a server for the name (a service file; nil until it
    /// has said), and one is being started.
    private var activatable: Bool?
    private var activating = false
    /// When starting the activatable server last failed (the loop's clock):
    /// a later alert tries again, at most once per `activationRetry`.
    private var activationFailedAt: Duration?
    private let activationRetry: Duration
    /// Bumped on every owner change, so answers from an old server are ignored.
    private var generation = 0
    private var tokens: [SubscriptionToken] = []

    /// - Parameters:
    ///   - desktopEntry: the `.desktop` basename, sent as the `desktop-entry` hint.
    ///   - log: where a waiting alert is written once (standard error by default).
    ///   - activationRetry: how long after a failed start of the server the next alert tries again.
    public init(connection: Connection, appName: String = "CC Relay", appIcon: String = "io.github.ccrelay.CCRelay",
                desktopEntry: String = "io.github.ccrelay.CCRelay", activationRetry: Duration = .seconds(30),
                log: @escaping (String) -> Void) {
        self.connection = connection
        self.activationRetry = activationRetry
        self.appName = appName
        self.appIcon = appIcon
        self.desktopEntry = desktopEntry
        self.log = log
    }

    /// Starts following the server and its signals (on the connection's loop).
    public func start() {
        connection.loop.preconditionIsCurrent()
        func on(_ member: String, _ handle: @escaping (Message) -> Void) -> SubscriptionToken {
            connection.subscribe(
                MatchRule(sender: Self.busName, path: Self.path, interface: Self.interface, member: member), handler: handle)
        }
        tokens = [
            on("NotificationClosed") { [weak self] in self?.handleClosed($0) },
            on("ActionInvoked") { [weak self] in self?.handleAction($0) },
            on("ActivationToken") { [weak self] in self?.handleActivationToken($0) },
            connection.watchName(Self.busName) { [weak self] in self?.ownerChanged(to: $0) },
        ]
    }

    /// Stops following the server.
    public func stop() {
        tokens.forEach(connection.unsubscribe)
        tokens = []
    }

    /// Shows `alert` in its kind's slot, replacing that kind's bubble.
    public func post(_ alert: Alert) {
        connection.loop.preconditionIsCurrent()
        let steps = book.post(alert, serverKnown: server != nil)
        guard server != nil else {
            if ownerKnown && owner == nil {
                // While the bus has not said whether it can start one, its answer decides.
                switch activatable {
                case true?: activate()
                case false?: logWaiting(alert)
                case nil: break
                }
            }
            onEvent?(.queued(alert.kind))
            return
        }
        perform(steps)
    }

    /// Takes over the bubble `id` that an earlier run of the daemon showed
    /// for `kind` (its journal kept the id): a new alert of the kind replaces
    /// it and closing the kind closes it, as if this run had shown it.
    /// Before the first server is known the ids wait for it: they are its
    /// ids only if a server is there when this run starts.
    public func adopt(_ kind: AlertKind, shownAs id: UInt32) {
        connection.loop.preconditionIsCurrent()
        book.adopt(kind, shownAs: id, serverKnown: ownerKnown)
    }

    /// Closes the bubble of `kind`, if one is shown or on its way.
    public func close(_ kind: AlertKind) {
        connection.loop.preconditionIsCurrent()
        perform(book.close(kind))
    }

    // MARK: Server changes

    private func logWaiting(_ alert: Alert) {
        log("no notification server on the session bus; will show when one appears: \(alert.title) — \(alert.body)")
    }

    /// The session bus connection is gone (the bus restarted): nothing more
    /// is sent on it, and what was on its way or waiting stays in
    /// `waitingAlerts`, for the notifier of the next connection to show.
    public func connectionLost() {
        connection.loop.preconditionIsCurrent()
        stop()
        forgetServer()
        ownerKnown = false
    }

    /// What waits for a notification server, oldest first (the newest alert of each kind).
    public var waitingAlerts: [Alert] { book.waitingAlerts }

    /// The server is gone: its ids mean nothing now, and an alert that was
    /// to follow a bubble on its way waits for the next server.
    private func forgetServer() {
        generation += 1
        server = nil
        book.forgetServer()
        activating = false
        activatable = nil
    }

    private func ownerChanged(to newOwner: String?) {
        forgetServer()
        book.ownerKnown(first: !ownerKnown, present: newOwner != nil)
        owner = newOwner
        ownerKnown = true
        onEvent?(.serverChanged(nil))
        guard let newOwner else { return askWhetherActivatable() }
        let generation = self.generation
        let getCapabilities = Message.methodCall(
            destination: newOwner, path: Self.path, interface: Self.interface, member: "GetCapabilities")
        connection.call(getCapabilities, timeout: .seconds(10)) { [weak self] capabilitiesResult in
            guard let self, self.generation == generation else { return }
            let getInformation = Message.methodCall(
                destination: newOwner, path: Self.path, interface: Self.interface, member: "GetServerInformation")
            self.connection.call(getInformation, timeout: .seconds(10)) { [weak self] informationResult in
                guard let self, self.generation == generation else { return }
                self.serverAnswered(owner: newOwner, capabilitiesResult, informationResult)
            }
        }
    }

    private func serverAnswered(owner: String, _ capabilities: Result<Message, DBusError>,
                                _ information: Result<Message, DBusError>) {
        var info = ServerInfo(name: "", vendor: "", version: "", specificationVersion: "", capabilities: [], owner: owner)
        do {
            let reply = try capabilities.get()
            try reply.expect("as")
            info.capabilities = try reply.argument(0)
        } catch {
            log("the notification server's capabilities are unreadable (\(error)); sending plain text without actions")
        }
        do {
            let reply = try information.get()
            try reply.expect("ssss")
            info.name = try reply.argument(0)
            info.vendor = try reply.argument(1)
            info.version = try reply.argument(2)
            info.specificationVersion = try reply.argument(3)
        } catch {
            log("the notification server's identity is unreadable: \(error)")
        }
        server = info
        onEvent?(.serverChanged(info))
        book.takeWaiting().forEach(post)
    }

    /// No one owns the name: can the bus start a server for it?
    private func askWhetherActivatable() {
        let generation = self.generation
        connection.call(
            .methodCall(destination: StandardNames.bus, path: StandardNames.busPath, interface: StandardNames.bus,
                        member: "ListActivatableNames"),
            timeout: .seconds(5)
        ) { [weak self] result in
            guard let self, self.generation == generation else { return }
            let activatable = ((try? result.get().argument(0, as: [String].self)) ?? []).contains(Self.busName)
            self.activatable = activatable
            let pending = self.book.waitingAlerts
            guard !pending.isEmpty else { return }
            if activatable { self.activate() } else { pending.forEach(self.logWaiting) }
        }
    }

    /// Starts the activatable server; the alerts go out when it owns the name.
    /// A start that failed (a server that died at activation because the
    /// session had no DISPLAY yet) is tried again by a later alert, at most
    /// once per `activationRetry` (30 s); meanwhile the alert is logged as waiting.
    private func activate() {
        guard !activating else { return }
        if let failedAt = activationFailedAt, connection.loop.now - failedAt < activationRetry {
            if let newest = book.waitingAlerts.last { logWaiting(newest) }
            return
        }
        activating = true
        let generation = self.generation
        connection.call(
            .methodCall(destination: StandardNames.bus, path: StandardNames.busPath, interface: StandardNames.bus,
                        member: "StartServiceByName", body: [.string(Self.busName), .uint32(0)]),
            timeout: .seconds(25)
        ) { [weak self] result in
            guard let self, self.generation == generation else { return }
            self.activating = false
            if case .failure(let error) = result {
                self.log("the notification server could not be started (\(error.message)); alerts wait, and the next one tries again")
                self.activationFailedAt = self.connection.loop.now
                self.book.waitingAlerts.forEach(self.logWaiting)
            } else {
                self.activationFailedAt = nil
            }
        }
    }

    // MARK: Notify

    /// Sends what the book says: a `Notify` (to the server that answers now) or a close.
    private func perform(_ steps: [NotificationSlots.Step]) {
        for step in steps {
            switch step {
            case .notify(let alert, let previousID):
                guard let server else { continue }
                send(alert, replacing: previousID, to: server)
            case .close(let id):
                let call = Message.methodCall(
                    destination: Self.busName, path: Self.path, interface: Self.interface, member: "CloseNotification",
                    body: [.uint32(id)])
                connection.call(call, timeout: .seconds(5)) { _ in }
            }
        }
    }

    private func send(_ alert: Alert, replacing previousID: UInt32, to server: ServerInfo) {
        let generation = self.generation
        connection.call(notifyMessage(alert, replacing: previousID, to: server), timeout: .seconds(10)) { [weak self] result in
            guard let self, self.generation == generation else { return }
            self.notifyAnswered(alert, previousID: previousID, result)
        }
    }

    func notifyMessage(_ alert: Alert, replacing previousID: UInt32, to server: ServerInfo) -> Message {
        let actions: [String] =
            server.supports("actions") ? alert.actions.flatMap { [$0.key, NotificationText.summary($0.label)] } : []
        var hints: [String: Variant] = [
            "urgency": Variant(alert.urgency.rawValue),
            "category": Variant(alert.kind.category),
            "desktop-entry": Variant(desktopEntry),
        ]
        if alert.transient { hints["transient"] = Variant(true) }
        if alert.resident { hints["resident"] = Variant(true) }
        return .methodCall(
            destination: server.owner, path: Self.path, interface: Self.interface, member: "Notify",
            body: [
                .string(appName), .uint32(previousID), .string(appIcon), .string(NotificationText.summary(alert.title)),
                .string(NotificationText.body(alert.body, serverParsesMarkup: server.supports("body-markup"))),
                actions.dbusValue, hints.dbusValue, .int32(-1),
            ])
    }

    private func notifyAnswered(_ alert: Alert, previousID: UInt32, _ result: Result<Message, DBusError>) {
        var id: UInt32?
        var failure: DBusError?
        do throws(DBusError) {
            let reply = try result.get()
            try reply.expect("u")
            id = try reply.argument(0)
        } catch {
            failure = error
        }
        guard let (delivered, close, next) = book.answered(alert.kind, previousID: previousID, id: id) else { return }
        if let failure {
            log("the notification server did not show “\(alert.title)”: \(failure)")
            onEvent?(.failed(alert.kind, failure))
        }
        if let delivered { onEvent?(.delivered(alert.kind, id: delivered)) }
        perform(close)
        if let next { post(next) }
    }

    // MARK: Signals

    private func handleClosed(_ message: Message) {
        guard message.signature == "uu", let id = try? message.argument(0, as: UInt32.self),
            let (kind, reason) = book.closed(id, code: (try? message.argument(1, as: UInt32.self)) ?? CloseReason.undefined.rawValue)
        else { return }
        onEvent?(.closed(kind, reason))
    }

    private func handleAction(_ message: Message) {
        guard message.signature == "us", let id = try? message.argument(0, as: UInt32.self),
            let key = try? message.argument(1, as: String.self), let (kind, token) = book.action(on: id)
        else { return }
        onEvent?(.actionInvoked(kind, key: key, activationToken: token))
    }

    private func handleActivationToken(_ message: Message) {
        guard message.signature == "us", let id = try? message.argument(0, as: UInt32.self),
            let token = try? message.argument(1, as: String.self)
        else { return }
        book.activationToken(token, for: id)
    }
}
