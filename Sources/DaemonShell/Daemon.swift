import AlertJournal
import CurlTransport
import CCProtocol
import DBus
import EventLoop
import DesktopServices
import CCRelayCore
#if canImport(Glibc)
import Glibc
#endif

/// The daemon shell: runs the pure `Session` on the daemon's event loop and carries
/// out its effects through its ports — CC/1 requests through a `CCTransport`
/// (`CCClient`), the boot-clock timer, alerts, the badge and the control API
/// through a `DesktopFace` (`SessionBusFace`), the alert journal in the
/// `AlertStore`, location fixes and their alerts (Daemon+Location.swift),
/// systemd notifications. The shell's unit tests drive it on a `ManualLoop`.
///
/// Confinement: everything runs on `loop`, one thread; the CC/1 client's
/// requests run one at a time, in order, in libcurl's multi handle on it.
public final class Daemon {
    public let loop: any EventScheduler
    let configuration: Configuration
    /// Where `configuration` came from: watched, and read again when it changes.
    let configurationPath: String
    private var fileWatch: FileWatch?
    /// Waits for the credential files to be quiet for a second after a change,
    /// and the last of them that changed.
    private var fileSettle: (any LoopTimer)?
    private var upgradeSettle: (any LoopTimer)?
    private var lastChangedFile = ""
    /// This program's file: replaced by an upgrade, it is run again at a quiet moment.
    private let executable = DaemonProcess.executablePath
    /// Exchanges with the CC server under way (a restart for an upgrade waits for none).
    private var exchangesInFlight = 0
    /// An upgrade replaced the program: restart once no exchange is under way.
    private var upgradeWaiting = false
    private let client: any CCTransport
    /// The session bus face, the notification server and the keyring.
    let desktop: any DesktopFace
    private let makeSystemWatch: (@escaping (SessionEvent) -> Void) -> (any SystemWatching)?
    private var periodic: [any LoopTimer] = []
    let log: (String) -> Void
    var session: Session
    /// The session's timer, on the loop's suspend-aware clock (CLOCK_BOOTTIME): a deadline set
    /// before a suspend fires right after resume instead of an uptime later.
    private var timer: (any LoopTimer)?
    private var systemWatch: (any SystemWatching)?
    /// CLOCK_BOOTTIME minus CLOCK_MONOTONIC when last looked: it grows only while asleep.
    private var sleptSoFar: Duration = .zero
    var token: String?
    /// What the saved session row says (token, interval, timeout): it is
    /// written again only when these change, and when the daemon stops.
    var savedFacts: SessionFacts?
    /// The address the server granted, and what went wrong last (for `GetStatus`).
    var ip = ""
    var lastProblem: ProblemReport?
    /// Malformed notices are logged once per run, not with every reply.
    private var droppedNoticesLogged = false
    /// When this run started (wall clock): its first login proves credentials alerts of earlier runs over.
    private let startedAt = AlertStore.now
    private var loggedInThisRun = false
    private let device: String
    let version: String
    /// The journal, badge, seen notices and saved session, kept usable through disk trouble.
    let journalKeeper: JournalKeeper
    /// The store when it can be used now (opened again after disk trouble).
    var store: AlertStore? { journalKeeper.usable() }
    /// The badge as last announced.
    var badge = BadgeState(count: 0, urgent: false)
    var location: DaemonLocation
    /// systemd, the sleep clock, restarting in place.
    let process: ProcessHooks
    /// Sends the selected alerts to the `[relay]` targets; nil when none are configured.
    var forwarder: AlertForwarder?

    /// Now on the loop's clock (CLOCK_BOOTTIME; virtual in the shell's unit tests).
    func now() -> Instant { Instant(sinceBoot: loop.now) }

    /// Prepares everything that can fail with a clear message: the CC/1
    /// client (URL, certificate files) and the session bus.
    public convenience init(configuration: Configuration, configurationPath: String, version: String, loop: any EventScheduler,
                            log: @escaping (String) -> Void) throws {
        try self.init(
            configuration: configuration, configurationPath: configurationPath, version: version, loop: loop,
            transport: CCClient(configuration: ConfigurationCheck.serverConfiguration(configuration), client: ClientInfo(version: version), loop: loop),
            desktop: SessionBusFace(loop: loop, log: log),
            systemWatch: { [loop] onEvent in SystemWatch(loop: loop, log: log, onEvent: onEvent) },
            relayTransport: { [loop] _ in
                RelayPoster(caFile: configuration.relayCAFile, userAgent: "ccrelay/\(version)", loop: loop)
            },
            storePath: AlertStore.defaultPath(), log: log)
    }

    /// The daemon with its ports given: the loop (and its clock), the CC/1
    /// transport, the desktop face, the system watch (logind and
    /// NetworkManager; nil for none), each relay target's client, the journal's file.
    init(configuration: Configuration, configurationPath: String, version: String, loop: any EventScheduler,
         transport: any CCTransport, desktop: any DesktopFace,
         systemWatch: @escaping (@escaping (SessionEvent) -> Void) -> (any SystemWatching)?,
         relayTransport: (RelayTarget) -> any RelayTransport = { _ in fatalError("no relay transport given") },
         storePath: String, process: ProcessHooks = ProcessHooks(), log: @escaping (String) -> Void) {
        self.process = process
        self.loop = loop
        self.configuration = configuration
        self.configurationPath = configurationPath
        self.version = version
        location = DaemonLocation(mode: configuration.locationMode)
        self.log = log
        client = transport
        self.desktop = desktop
        makeSystemWatch = systemWatch
        var settings = SessionSettings()
        settings.warnBefore = .seconds(configuration.warnBefore)
        settings.autoRelogin = configuration.autoRelogin
        settings.logoutOnExit = configuration.logoutOnExit
        settings.notices = configuration.notices
        journalKeeper = JournalKeeper(path: storePath, log: log, now: { [loop] in Instant(sinceBoot: loop.now) })
        session = Session(settings: settings, noticesSeen: journalKeeper.store?.seenNotices() ?? [])
        device = DaemonProcess.deviceName
        if !configuration.relayTargets.isEmpty {
            forwarder = AlertForwarder(
                targets: configuration.relayTargets, selection: configuration.relaySelection, loop: loop, host: device,
                store: { [journalKeeper] in journalKeeper.usable() },
                storeFailed: { [journalKeeper] error, what in journalKeeper.failed(error, doing: what) }, log: log,
                transport: relayTransport)
        }
    }

    /// Claims the daemon's bus name (failing with who owns it when another
    /// daemon runs), then starts the session: carrying on with the previous
    /// run's when its deadline has not passed, logging in otherwise. `done`
    /// runs on `loop`, with the error when the daemon cannot start. Call it on `loop`.
    public func start(done: @escaping (Error?) -> Void) {
        loop.preconditionIsCurrent()
        desktop.onAlertEvent = { [weak self] event in self?.notifierEvent(event) }
        desktop.onReconnected = { [weak self] in self?.sessionBusReturned() }
        desktop.start(serving: self, badge: { [weak self] in self?.badge ?? BadgeState(count: 0, urgent: false) }) { error in
            if let error { return done(error) }
            self.startSession()
            done(nil)
        }
    }

    private func startSession() {
        timer = loop.makeTimer { [weak self] in self?.timerFired() }
        sleptSoFar = process.sleptSinceBoot()
        systemWatch = makeSystemWatch { [weak self] event in self?.handle(event) }
        systemWatch?.onDesktopSessionClosed = { [weak self] in self?.endWithTheDesktopSession("the desktop session closed") }
        desktop.onBusGone = { [weak self] in self?.sessionBusGone() }
        systemWatch?.start()
        startPeriodicWork()
        watchFiles()
        // Bubbles earlier runs left for unread alerts are this run's to replace or close; the
        // waiting daemon's "cannot use its configuration" is over: the configuration is usable now.
        for (kind, id) in journalKeeper.bubblesOfEarlierRuns() { desktop.adopt(kind, shownAs: id) }
        readAndClose(.notSetUp)
        refreshBadge(announce: true)
        forwarder?.onRefusal = { [weak self] subject in
            guard let self else { return }
            if let subject { self.apply([.post(subject)]) } else { self.desktop.close(.relayRefused) }
        }
        // Alerts a previous run could not deliver; what waited for a target since removed is said and dropped.
        if let store {
            do {
                try AlertForwarder.dropQueuesOfRemovedTargets(configuration.relayTargets, store: store, log: log)
            } catch {
                journalKeeper.failed(error, doing: "tidy the outbox")
            }
        }
        forwarder?.kick()
        startLocation()
        if let restored = restoredSession() {
            handle(.restore(restored))
        } else {
            handle(.start)
        }
        process.notify("READY=1\nSTATUS=\(session.state.rawValue)")
    }

    /// Stops: logs out first when configured, then calls `done` (on `loop`, where this is called).
    public func stop(done: @escaping () -> Void) {
        loop.preconditionIsCurrent()
        process.notify("STOPPING=1")
        timer?.disarm()
        stopLocation()
        apply(DaemonRules.whenStopping(session.handle(.stop, at: now())))
        saveSession()
        // Requests run in order: this comes after the logout.
        client.dropConnection { done() }
    }

    /// The desktop session is over: log out when `logout-on-exit` says so,
    /// then exit — a daemon left running would keep a shared lab PC's
    /// previous student online. (The systemd user unit is stopped by systemd.)
    func endWithTheDesktopSession(_ why: String) {
        log("\(why); stopping with it")
        stop { [process] in process.exit(0) }
    }

    /// The session bus has stayed away: without logind to say whether the
    /// session lives on (or systemd to stop the unit), the session is taken to be over.
    private func sessionBusGone() {
        if systemWatch?.followsDesktopSession == true || process.isTheUserUnit {
            return log("the session bus has been away for \(SessionBusFace.busGrace.components.seconds) s; still trying (\(process.isTheUserUnit ? "systemd" : "logind") says when the session ends)")
        }
        endWithTheDesktopSession("the session bus has been away for \(SessionBusFace.busGrace.components.seconds) s and no logind session says the desktop lives on")
    }

    /// The session bus came back: a portal location source used the old connection.
    private func sessionBusReturned() {
        guard location.source is PortalLocation else { return }
        stopLocation()
        startLocation()
    }

    /// The systemd watchdog (when WatchdogSec= asks for it) and the daily
    /// certificate check: the only wake-ups besides the session's timer.
    private func startPeriodicWork() {
        if let period = process.watchdogPeriod {
            periodic.append(repeating(every: period) { [process] in process.notify("WATCHDOG=1") })
        }
        if let certificate = configuration.certificate {
            periodic.append(repeating(every: .seconds(86_400)) { [weak self] in self?.checkCertificate(certificate) })
        }
    }

    /// A timer that runs `work` now and then every `interval`.
    private func repeating(every interval: Duration, _ work: @escaping () -> Void) -> any LoopTimer {
        var timer: (any LoopTimer)?
        let made = loop.makeTimer { [weak self] in
            guard self != nil else { return }
            timer?.arm(after: interval)
            work()
        }
        timer = made
        made.arm(after: .zero)
        return made
    }

    /// The configuration and the files it names: a new configuration takes
    /// effect by itself, and a replaced certificate is tried at once after a refusal.
    private func watchFiles() {
        let paths = [configurationPath, configuration.certificate, configuration.key, configuration.caFile].compactMap { $0 }
        do {
            fileWatch = try FileWatch(paths: paths, programs: [executable].compactMap { $0 }, loop: loop) { [weak self] path in self?.fileChanged(path) }
        } catch {
            // Said once: without the watch a changed file is not noticed (a user's inotify instances may be used up).
            log("cannot watch \(configurationPath) and the certificate files (\(error)); a changed configuration or certificate takes effect only after: systemctl --user restart ccrelay")
        }
    }

    private func fileChanged(_ path: String) {
        if path == configurationPath { return configurationChanged() }
        if path == executable { return programReplaced() }
        // A certificate, key or CA file: after a refusal of the credentials,
        // the user acted. Certificate and key are often replaced one after
        // the other: the login waits until the files have been quiet for a second.
        lastChangedFile = path
        let settle = fileSettle ?? loop.makeTimer { [weak self] in self?.credentialFilesSettled() }
        fileSettle = settle
        settle.arm(after: .seconds(1))
    }

    /// Marks the unread alerts of `kind` (raised before `postedBefore`) read and
    /// closes their bubble: what they said is over.
    private func readAndClose(_ kind: AlertKind, postedBefore: Double = .infinity) {
        guard let store else { return }
        do {
            guard try store.acknowledge(kind: kind, postedBefore: postedBefore) > 0 else { return }
            desktop.close(kind)
            refreshBadge()
        } catch {
            journalKeeper.failed(error, doing: "mark the \(kind.rawValue) alerts read")
        }
    }

    /// The package manager replaced this program (dpkg writes the new file
    /// and renames it over the old): once it has been quiet for a second and
    /// no exchange is under way, the daemon runs the new one, the same process
    /// carrying on with the session (as for a changed configuration).
    private func programReplaced() {
        guard let executable, access(executable, X_OK) == 0 else { return }
        let settle = upgradeSettle ?? loop.makeTimer { [weak self] in
            guard let self else { return }
            self.upgradeWaiting = true
            self.restartForTheUpgradeIfQuiet()
        }
        upgradeSettle = settle
        settle.arm(after: .seconds(1))
    }

    private func restartForTheUpgradeIfQuiet() {
        guard upgradeWaiting, exchangesInFlight == 0 else { return }
        log("\(executable ?? "the program") was replaced (an upgrade); restarting with it")
        saveSession()
        process.restart(log)
        upgradeWaiting = false
    }

    /// One exchange with the CC server is over: a restart for an upgrade may go now.
    private func exchangeEnded() {
        exchangesInFlight -= 1
        restartForTheUpgradeIfQuiet()
    }

    private func credentialFilesSettled() {
        guard DaemonRules.logInAgainAfterCredentialFilesChanged(state: session.state, lastProblemCode: lastProblem?.code) else { return }
        log("\(lastChangedFile) changed; logging in again")
        handle(.start)
    }

    /// A valid new configuration restarts the daemon with it (the same
    /// process, exec'd anew, carrying on with the session); an invalid one is
    /// reported and the running configuration kept.
    private func configurationChanged() {
        let loaded = ConfigurationCheck.load(configurationPath, log: log)
        guard var fresh = loaded.configuration else {
            let problems = loaded.errors.map(\.description).joined(separator: "; ")
            return log("the changed configuration is not used until it is fixed: \(problems)")
        }
        var running = configuration
        fresh.lines = [:]
        running.lines = [:]
        guard fresh != running else { return }
        log("the configuration changed; restarting with it")
        saveSession()
        process.restart(log)
    }

    /// Warns, once a day, when the student certificate expires within 7 days.
    private func checkCertificate(_ path: String) {
        guard let facts = try? CredentialFiles.inspect(certificate: path, key: configuration.key, passphrase: configuration.bundlePassword),
            let warning = DaemonRules.expiryWarning(secondsUntilExpiry: facts.secondsUntilExpiry)
        else { return }
        apply([.post(warning)])
    }

    /// A timer expiry; a sleep logind did not announce shows as time that
    /// CLOCK_BOOTTIME counted and CLOCK_MONOTONIC did not.
    private func timerFired() {
        let slept = process.sleptSinceBoot()
        defer { sleptSoFar = slept }
        if DaemonRules.sleptUnannounced(sleptBefore: sleptSoFar, sleptNow: slept, state: session.state) {
            log("the machine slept without notice; resuming")
            handle(.sleeping)
            handle(.resumed)
        }
        handle(.timerFired)
    }

    func handle(_ event: SessionEvent) {
        loop.preconditionIsCurrent()
        apply(session.handle(event, at: now()))
        switch event {
        case .loginAnswered, .keepAliveAnswered, .logout:
            saveSessionIfChanged()
            // Alerts a full disk kept out of the journal go in (and out to the targets) once it has room.
            if journalKeeper.hasUnjournaled { journal([]) }
        // Outside access may be back: relay targets that failed try at once.
        case .connectivity(online: true), .resumed: forwarder?.flush()
        default: break
        }
    }

    /// Carries out effects in order. Their alerts are journaled first, all in
    /// one transaction (a reply with many notices costs one write, not one each).
    func apply(_ effects: [SessionEffect]) {
        var posts: [(Alert, notice: String?)] = []
        for case .post(let subject) in effects {
            let alert = alert(for: subject)
            if case .notice(let id, _, _, _) = subject { posts.append((alert, id)) } else { posts.append((alert, nil)) }
        }
        journal(posts)
        // One bubble per kind: of many notices in one reply only the newest (DaemonRules.bubbles).
        var bubbles = DaemonRules.bubbles(for: effects.compactMap { if case .post(let subject) = $0 { subject } else { nil } })[...]
        for effect in effects {
            guard case .post(let subject) = effect else {
                apply(effect)
                continue
            }
            guard bubbles.first?.subject == subject else { continue }
            let (_, moreNotices) = bubbles.removeFirst()
            var shown = alert(for: subject)
            if moreNotices > 0 {
                shown.body += "\n" + Localization.localizer.plural(
                    "%s more campus notice came with it (ccrelay history lists it).",
                    "%s more campus notices came with it (ccrelay history lists them).", count: moreNotices)
            }
            desktop.post(shown)
        }
    }

    /// The alert for `subject` in the user's language.
    private func alert(for subject: AlertSubject) -> Alert {
        AlertCatalogue.alert(for: subject, localize: Localization.localizer)
    }

    private func apply(_ effect: SessionEffect) {
        switch effect {
        case .sendLogin(let timeout):
            guard let user = configuration.user else {
                return login(user: nil, password: nil, timeout: timeout)
            }
            // Password login: the password comes from the keyring, never from a file.
            desktop.password(user: user) { result in
                guard case .success(let password?) = result else {
                    self.lastProblem = ProblemReport(
                        code: .noPassword,
                        sentence: "No password for \(user) is in the keyring. Save it with: ccrelay login --save-password --user \(user)")
                    self.log("no password for \(user) in the keyring; save it with: ccrelay login --save-password --user \(user)")
                    self.handle(.loginAnswered(.refused(.badPassword, message: nil)))
                    return
                }
                self.login(user: user, password: password, timeout: timeout)
            }
        case .sendKeepAlive(let seq, let timeout):
            guard let token else { return }
            exchangesInFlight += 1
            client.keepAlive(session: token, seq: seq, location: fixForKeepAlive(), timeout: timeout) { exchange in
                defer { self.exchangeEnded() }
                let reading = KeepAliveReading(exchange)
                self.note(reading.problem, droppedNotices: reading.droppedNotices)
                if let rejected = reading.locationRejected { self.keepAliveLocation(rejected: rejected) }
                self.handle(.keepAliveAnswered(reading.answer))
            }
        case .sendLogout:
            guard let token else { return }
            self.token = nil
            exchangesInFlight += 1
            client.logout(session: token, timeout: .seconds(5)) { _ in self.exchangeEnded() }
        case .dropConnection:
            client.dropConnection {}
        case .armTimer(let instant): timer?.arm(at: instant.sinceBoot)
        case .cancelTimer: timer?.disarm()
        case .post:
            apply([effect])
        case .close(let kind): desktop.close(kind)
        case .stateChanged(let state):
            log("state: \(state.rawValue)")
            process.notify("STATUS=\(state.rawValue)")
            announceProperties([.state])
            // The campus session is back: what waited (a logout alert to an
            // internet target) goes out now.
            if state == .online { forwarder?.flush() }
        case .readyToSleep: systemWatch?.releaseSleepLock()
        }
    }

    private func login(user: String?, password: String?, timeout: Duration) {
        exchangesInFlight += 1
        client.login(device: device, user: user, password: password, timeout: timeout) { exchange in
            defer { self.exchangeEnded() }
            let reading = LoginReading(exchange)
            if let grant = reading.grant {
                self.token = grant.session
                self.ip = grant.ip
                self.serverAsks(grant.location)
                // The first login of the run worked: the certificate, key and password a credentials
                // alert of an earlier run blamed work now (this run's own expiry warning stays; a
                // session carried on from the last run proves no login and closes nothing).
                if !self.loggedInThisRun {
                    self.loggedInThisRun = true
                    self.readAndClose(.credentials, postedBefore: self.startedAt)
                }
            }
            self.note(reading.problem, droppedNotices: reading.droppedNotices)
            self.handle(.loginAnswered(reading.answer))
        }
    }

    /// docs/protocol.md's leniency: a malformed notice is dropped and the reply
    /// stands; said once per run (a server may send it with every reply).
    private func noteDroppedNotices(_ dropped: Int) {
        guard dropped > 0, !droppedNoticesLogged else { return }
        droppedNoticesLogged = true
        log("the server sent \(dropped) malformed (or too many) notices; dropped them, the rest of the reply stands")
    }

    /// What every exchange leaves behind: its problem (for `GetStatus`) and dropped notices.
    private func note(_ problem: ProblemReport?, droppedNotices: Int) {
        if let problem { lastProblem = problem }
        noteDroppedNotices(droppedNotices)
    }
}
