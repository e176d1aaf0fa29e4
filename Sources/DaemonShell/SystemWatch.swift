import DBus
import EventLoop
import DesktopServices
import CCRelayCore
#if canImport(Glibc)
import Glibc
#endif

/// What the daemon needs of the system's watchers (logind and NetworkManager).
protocol SystemWatching: AnyObject {
    /// Connects and subscribes; events arrive through the handler given at creation.
    func start()
    /// Lets a pending suspend go ahead (the delay inhibitor is released).
    func releaseSleepLock()
    /// Asks NetworkManager to check the way out now (`CheckConnectivity`);
    /// what it finds arrives as `.networkConnectivity`. Nothing without NetworkManager.
    func checkConnectivity()
    /// Called once when the logind session this daemon runs in closes (set before `start`).
    var onDesktopSessionClosed: (() -> Void)? { get set }
    /// Whether logind follows a session of this daemon's, and will say when it closes.
    var followsDesktopSession: Bool { get }
}

/// Follows the system: logind's sleep announcements (holding a `delay` sleep
/// inhibitor so a last keep-alive can go out) and NetworkManager's state and
/// connectivity, and the end of the logind session the daemon runs in (its
/// `State` becoming `closing`, or its removal). Without a system bus, logind
/// or NetworkManager it does nothing, and the daemon works on its timers alone.
///
/// Confinement: used only on `loop`.
final class SystemWatch: SystemWatching {
    private let loop: any EventScheduler
    private let onEvent: (DaemonEvent) -> Void
    private let log: (String) -> Void
    private var bus: Connection?
    private var sleepLock: UnixFD?
    private var online: Bool?
    /// Whether NetworkManager runs (its name has an owner).
    private var networkManagerRuns = false
    private var connectivity: NetworkConnectivity?
    var onDesktopSessionClosed: (() -> Void)?
    /// The logind session this daemon runs in, once logind named it.
    private var desktopSession: ObjectPath?
    private var desktopSessionClosed = false
    var followsDesktopSession: Bool { desktopSession != nil && !desktopSessionClosed }

    static let logind = "org.freedesktop.login1"
    static let logindPath: ObjectPath = "/org/freedesktop/login1"
    static let logindManager = "org.freedesktop.login1.Manager"
    static let logindSession = "org.freedesktop.login1.Session"
    static let networkManager = "org.freedesktop.NetworkManager"
    static let networkManagerPath: ObjectPath = "/org/freedesktop/NetworkManager"

    /// Without NetworkManager (or without a system bus), the routes and the link of `interface`, through netlink.
    private let routes: RouteWatch

    init(loop: any EventScheduler, interface: String? = nil, log: @escaping (String) -> Void, onEvent: @escaping (DaemonEvent) -> Void) {
        self.loop = loop
        self.log = log
        self.onEvent = onEvent
        routes = RouteWatch(loop: loop, interface: interface, log: log, onEvent: onEvent)
    }

    /// Connects to the system bus and subscribes (on `loop`).
    func start() {
        loop.preconditionIsCurrent()
        let bus: Connection
        do {
            bus = try Connection(bus: .system, loop: loop)
        } catch {
            log("no system bus (\(error.message)); sleep and network changes are not followed")
            return
        }
        self.bus = bus
        bus.onDisconnect = { [weak self] in self?.log("the system bus went away; sleep and network changes are no longer followed") }
        _ = bus.subscribe(MatchRule(sender: Self.logind, path: Self.logindPath, interface: Self.logindManager, member: "PrepareForSleep")) {
            [weak self] message in
            guard let self, let starting = try? message.argument(0, as: Bool.self) else { return }
            if starting {
                self.onEvent(.system(.sleeping))
            } else {
                self.takeSleepLock()
                self.onEvent(.system(.resumed))
            }
        }
        _ = bus.watchName(Self.logind) { [weak self] owner in
            guard let self else { return }
            if owner != nil {
                self.takeSleepLock()
                self.followDesktopSession(on: bus)
            } else {
                self.sleepLock = nil
                self.desktopSession = nil
            }
        }
        _ = bus.subscribe(MatchRule(sender: Self.logind, path: Self.logindPath, interface: Self.logindManager, member: "SessionRemoved")) {
            [weak self] message in
            guard let self, let path = try? message.argument(1, as: ObjectPath.self), path == self.desktopSession else { return }
            self.desktopSessionEnded("logind removed it")
        }
        _ = bus.subscribe(MatchRule(sender: Self.networkManager, path: Self.networkManagerPath, interface: Self.networkManager, member: "StateChanged")) {
            [weak self] message in
            guard let state = try? message.argument(0, as: UInt32.self) else { return }
            self?.networkState(state)
        }
        // NetworkManager announces property changes in its own signal and in the standard one.
        for rule in [
            MatchRule(sender: Self.networkManager, path: Self.networkManagerPath, interface: Self.networkManager, member: "PropertiesChanged"),
            .propertiesChanged(sender: Self.networkManager, path: Self.networkManagerPath),
        ] {
            _ = bus.subscribe(rule) { [weak self] message in
                let changes = message.body.lazy.compactMap { try? [String: Variant](dbusValue: $0) }.first
                guard let self, let changes else { return }
                self.networkProperties(changes)
            }
        }
        _ = bus.watchName(Self.networkManager) { [weak self] owner in
            guard let self else { return }
            self.networkManagerRuns = owner != nil
            guard owner != nil else {
                // Without NetworkManager the routes say whether the network is there.
                if self.online == false { self.onEvent(.network(online: true, why: "NetworkManager stopped; the routes say the network is there")) }
                self.online = nil
                self.connectivity = nil
                self.routes.start()
                return
            }
            self.routes.stop()
            bus.allProperties(Self.networkManager, Self.networkManagerPath, Self.networkManager) { [weak self] result in
                guard let properties = try? result.get() else { return }
                self?.networkProperties(properties)
            }
        }
    }

    /// Finds the logind session this daemon runs in (`XDG_SESSION_ID`, or
    /// its own process) and follows its `State`. A daemon outside any session
    /// (the systemd user unit, whose lifetime is systemd's) follows none.
    private func followDesktopSession(on bus: Connection) {
        let lookup: (String, Value) =
            if let id = getenv("XDG_SESSION_ID").map({ String(cString: $0) }), !id.isEmpty, id.utf8.count < 256 {
                ("GetSession", .string(id))
            } else {
                ("GetSessionByPID", .uint32(UInt32(getpid())))
            }
        bus.call(.methodCall(destination: Self.logind, path: Self.logindPath, interface: Self.logindManager, member: lookup.0,
                             body: [lookup.1])) { [weak self] result in
            guard let self, let path = try? result.get().argument(0, as: ObjectPath.self), self.desktopSession != path else { return }
            self.desktopSession = path
            _ = bus.subscribe(.propertiesChanged(sender: Self.logind, path: path, of: Self.logindSession)) { [weak self] message in
                let changes = message.body.lazy.compactMap { try? [String: Variant](dbusValue: $0) }.first
                if changes?["State"]?.get(String.self) == "closing" { self?.desktopSessionEnded("logind is closing it") }
            }
            bus.property(Self.logind, path, Self.logindSession, "State") { [weak self] state in
                if (try? state.get())?.get(String.self) == "closing" { self?.desktopSessionEnded("logind is closing it") }
            }
        }
    }

    private func desktopSessionEnded(_ why: String) {
        guard !desktopSessionClosed else { return }
        desktopSessionClosed = true
        log("the desktop session ended (\(why))")
        onDesktopSessionClosed?()
    }

    /// Lets the machine sleep: drops the delay inhibitor.
    func releaseSleepLock() {
        sleepLock = nil
    }

    private func takeSleepLock() {
        guard let bus, sleepLock == nil else { return }
        bus.call(.methodCall(destination: Self.logind, path: Self.logindPath, interface: Self.logindManager, member: "Inhibit",
                             body: [.string("sleep"), .string("CC Relay"),
                                    .string("Sending a last keep-alive to the campus server"), .string("delay")])) { [weak self] result in
            do {
                let reply = try result.get()
                try reply.expect("h")
                self?.sleepLock = try reply.argument(0, as: UnixFD.self)
            } catch {
                self?.log("logind refused a sleep inhibitor (\(error)); keep-alives may stop abruptly at sleep")
            }
        }
    }

    func checkConnectivity() {
        guard let bus, networkManagerRuns else { return }
        bus.call(.methodCall(destination: Self.networkManager, path: Self.networkManagerPath, interface: Self.networkManager,
                             member: "CheckConnectivity")) { [weak self] result in
            guard let said = (try? result.get().argument(0, as: UInt32.self)).flatMap(NetworkConnectivity.init(rawValue:)) else { return }
            self?.networkConnectivity(said)
        }
    }

    private func networkProperties(_ properties: [String: Variant]) {
        if let state = properties["State"]?.get(UInt32.self) { networkState(state) }
        if let said = properties["Connectivity"]?.get(UInt32.self).flatMap(NetworkConnectivity.init(rawValue:)) { networkConnectivity(said) }
    }

    private func networkConnectivity(_ said: NetworkConnectivity) {
        guard said != connectivity else { return }
        let first = connectivity == nil
        connectivity = said
        onEvent(.networkConnectivity(said))
        // PORTAL or LIMITED after something better: the campus gate may have closed; keep-alive at once.
        if !first, said == .portal || said == .limited, online != false {
            onEvent(.network(online: true, why: "NetworkManager says \(said.name)"))
        }
    }

    /// NM_STATE_CONNECTED_LOCAL (50) and above count as online.
    private func networkState(_ state: UInt32) {
        let nowOnline = state >= 50
        guard nowOnline != online else { return }
        let first = online == nil
        online = nowOnline
        if first && nowOnline { return }
        onEvent(.network(online: nowOnline, why: nowOnline ? "NetworkManager connected (state \(state))"
                            : "the network went down: NetworkManager disconnected (state \(state))"))
    }
}
