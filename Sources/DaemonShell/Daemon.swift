import AlertJournal
import CurlTransport
import CCProtocol
import DBus
import EventLoop
import DesktopServices
import CCRelayCore
import CoreVocabulary
import Forwarding
import ForwardingTransport
#if canImport(Glibc)
import Glibc
#endif

/// The daemon shell: the interpreter of `DaemonCore`. It says what its ports
/// report as `DaemonEvent`s and carries out the core's `DaemonEffect`s
/// through them — CC/1 requests through a `CCTransport` (`CCClient`; none
/// while not set up), the core's timers on the loop's suspend-aware clock,
/// bubbles, the published snapshot and the control API through a
/// `DesktopFace` (`SessionBusFace`), the journal in the `AlertStore`, the
/// location source, the file watch, forwarding, systemd. It holds no rule
/// of its own; its unit tests drive it on a `ManualLoop`.
///
/// Confinement: everything runs on `loop`, one thread; the CC/1 client's
/// requests run one at a time, in order, in libcurl's multi handle on it.
public final class Daemon {
    private let loop: any EventScheduler
    private var core: DaemonCore
    /// Where the configuration came from: watched, and read again when it changes.
    private let configurationPath: String
    let version: String
    /// The campus login (CC/1 or a Srun portal); nil while not set up.
    private let client: (any CampusClient)?
    /// Checks whether traffic gets out (`[probe]`), when the core asks.
    private let outsideProbe: (any OutsideProbing)?
    private let desktop: any DesktopFace
    private let makeSystemWatch: (@escaping (DaemonEvent) -> Void) -> (any SystemWatching)?
    private var systemWatch: (any SystemWatching)?
    private let log: (String) -> Void
    private let process: ProcessHooks
    private let device: String
    /// The journal, badge, seen notices and saved session, kept usable through disk trouble.
    private let journalKeeper: JournalKeeper
    private var store: AlertStore? { journalKeeper.usable() }
    /// The metrics: `GetStatus`' `metrics` entry and the `[metrics] textfile`.
    let metrics: MetricsPublisher
    /// Sends the selected alerts to the `[relay]` targets; nil when none are configured.
    private var forwarder: AlertForwarder?
    private var timers: [DaemonTimer: any LoopTimer] = [:]
    private var periodic: [any LoopTimer] = []
    private var fileWatch: FileWatch?
    /// Hears the wall clock being set: what waits for a wall-clock time is decided again.
    private var wallClockWatch: WallClockWatch?
    /// This program's file: replaced by an upgrade, it is run again at a quiet moment.
    private let executable = DaemonProcess.executablePath
    private var locationSource: LocationSource?
    /// What the last Clear Badge came to (how many it marked read), for `ClearBadge`'s answer.
    private var lastClear: Result<Int, DBusError>?
    /// What the core was last told of alerts the journal could not take.
    private var keptOut = false
    /// An effect changed the journal: it is read (once) before the next event.
    private var journalChanged = false
    /// What users see: the snapshot the core published last (the core keeps it), or before any, its first.
    var snapshot: DaemonSnapshot { core.published ?? core.snapshot(at: now()) }

    /// Now on the loop's clock (CLOCK_BOOTTIME; virtual in the shell's unit tests).
    private func now() -> Instant { Instant(sinceBoot: loop.now) }

    /// Prepares everything that can fail with a clear message: the CC/1
    /// client (URL, certificate files) when the configuration is usable, and the session bus.
    /// As a system service (`system`; one `instance` of several), on the
    /// system bus with alerts to the system log (`logAlert`) and the journal
    /// in the service's state directory.
    public convenience init(reading: ConfigurationReading, configurationPath: String, version: String, loop: any EventScheduler,
                            system: Bool = false, instance: String? = nil, log: @escaping (String) -> Void,
                            logAlert: @escaping (_ priority: Int, String) -> Void = { _, _ in }) throws {
        let campus: (any CampusClient)? = try reading.usable.map { configuration throws(ClientConfigurationError) in
            switch configuration.serverProtocol {
            case .cc1:
                CCCampusClient(try CCClient(
                    configuration: ConfigurationCheck.serverConfiguration(configuration), client: ClientInfo(version: version), loop: loop))
            case .srun:
                try SrunCampusClient(configuration: configuration, userAgent: "ccrelay/\(version)", loop: loop)
            }
        }
        let face: any DesktopFace =
            system
            ? try SystemBusFace(loop: loop, instance: instance, log: log, logAlert: { logAlert($0.rawValue, $1) })
            : try SessionBusFace(loop: loop, log: log)
        self.init(
            reading: reading, configurationPath: configurationPath, version: version, loop: loop, campus: campus,
            desktop: face, isSystemService: system, instance: instance,
            systemWatch: { [loop] onEvent in SystemWatch(loop: loop, interface: reading.usable?.interface, log: log, onEvent: onEvent) },
            forwardTransport: { [loop] target in
                ForwardPoster(caFile: reading.usable?.forwardCAFile, userAgent: "ccrelay/\(version)", loop: loop)
            },
            outsideProbe: reading.usable.map { configuration in
                OutsideProbe(urls: configuration.probeURLs, interface: configuration.interface, userAgent: "ccrelay/\(version)", loop: loop)
            },
            storePath: system ? SystemService.storePath(instance: instance) : AlertStore.defaultPath(), log: log)
    }

    /// The daemon with its ports given: the loop (and its clock), the CC/1
    /// transport (nil while not set up), the desktop face, the system watch
    /// (logind and NetworkManager; nil for none), each relay target's client, the journal's file.
    init(reading: ConfigurationReading, configurationPath: String, version: String, loop: any EventScheduler,
         campus: (any CampusClient)?, desktop: any DesktopFace, isSystemService: Bool = false, instance: String? = nil,
         systemWatch: @escaping (@escaping (DaemonEvent) -> Void) -> (any SystemWatching)?,
         forwardTransport: (ForwardTarget) -> any ForwardTransport = { _ in fatalError("no relay transport given") },
         outsideProbe: (any OutsideProbing)? = nil, storePath: String, process: ProcessHooks = ProcessHooks(), log: @escaping (String) -> Void) {
        self.process = process
        self.loop = loop
        self.configurationPath = configurationPath
        self.version = version
        self.log = log
        client = campus
        self.outsideProbe = outsideProbe
        self.desktop = desktop
        makeSystemWatch = systemWatch
        journalKeeper = JournalKeeper(path: storePath, log: log, now: { [loop] in Instant(sinceBoot: loop.now) }, wallClock: { [loop] in loop.wallClock })
        metrics = MetricsPublisher(
            textfile: reading.usable?.metricsTextfile, instance: MetricsFacts.instance(system: isSystemService, name: instance),
            version: version, store: { [journalKeeper] in journalKeeper.usable() }, wallClock: { [loop] in loop.wallClock }, log: log)
        core = DaemonCore(
            reading: reading, path: configurationPath, noticesSeen: journalKeeper.store?.seenNotices() ?? [],
            badge: (try? journalKeeper.store?.badge()) ?? BadgeState(count: 0, urgent: false), localizer: Localization.localizer,
            commands: isSystemService ? UserCommands(systemInstance: instance ?? "") : .desktop, host: DaemonProcess.deviceName)
        device = DaemonProcess.deviceName
        setupOfferedMarker = String(storePath[..<(storePath.lastIndex(of: "/") ?? storePath.startIndex)]) + "/setup-offered"
        if let configuration = reading.usable, !configuration.forwardTargets.isEmpty {
            forwarder = AlertForwarder(
                targets: configuration.forwardTargets, loop: loop, store: { [journalKeeper] in journalKeeper.usable() },
                storeFailed: { [journalKeeper] error, what in journalKeeper.failed(error, doing: what) }, transport: forwardTransport)
        }
    }

    /// Beside the journal: a fresh install's setup was offered (at an earlier login).
    private let setupOfferedMarker: String

    /// Claims the daemon's bus name (failing with who owns it when another
    /// daemon runs), then starts: carrying on with the previous run's session
    /// when its deadline has not passed, logging in otherwise, or waiting for
    /// a usable configuration. `done` runs on `loop`, with the error when the
    /// daemon cannot start. Call it on `loop`.
    public func start(done: @escaping (Error?) -> Void) {
        loop.preconditionIsCurrent()
        desktop.onAlertEvent = { [weak self] event in self?.notifierEvent(event) }
        desktop.onReconnected = { [weak self] in self?.sessionBusReturned() }
        desktop.start(serving: self) { error in
            if let error { return done(error) }
            self.begin()
            done(nil)
        }
    }

    private func begin() {
        if core.configuration != nil {
            systemWatch = makeSystemWatch { [weak self] event in self?.handle(event) }
            systemWatch?.onDesktopSessionClosed = { [weak self] in self?.handle(.desktopSessionClosed) }
            systemWatch?.start()
        }
        desktop.onBusGone = { [weak self] in self?.sessionBusGone() }
        if forwarder != nil { wallClockWatch = WallClockWatch(loop: loop) { [weak self] in self?.wallClockChanged() } }
        startPeriodicWork()
        forwarder?.report = { [weak self] event in self?.handle(.forward(event)) }
        // Alerts a previous run could not deliver; what waited for a target since removed is said and dropped.
        if let store, let configuration = core.configuration {
            do {
                try AlertForwarder.dropQueuesOfRemovedTargets(configuration.forwardTargets, store: store, log: log)
            } catch {
                journalKeeper.failed(error, doing: "tidy the outbox")
            }
        }
        if forwarder != nil { handle(.forward(.queued)) }
        let journal = (try? store?.alerts(limit: 500)) ?? []
        let badge = (try? store?.badge()) ?? BadgeState(count: 0, urgent: false)
        handle(.started(DaemonStart(
            wallClock: loop.wallClock, sleptSinceBoot: process.sleptSinceBoot(),
            journal: journal.map { JournaledAlert(kind: $0.kind, body: $0.body, unread: !$0.acknowledged, notificationID: $0.notificationID) },
            badge: badge, recent: Self.recent(journal), carriedOn: carriedSession(),
            setupOffered: access(setupOfferedMarker, F_OK) == 0)))
        forwardingChanged()
    }

    /// Stops: logs out first when configured, then calls `done` (on `loop`, where this is called).
    public func stop(done: @escaping () -> Void) {
        loop.preconditionIsCurrent()
        handle(.stop)
        // After the stop is handled (asked from an effect, it waits in the mailbox), so after its logout:
        // requests run in order.
        whenQuiet { [client, metrics] in
            // The stopped daemon publishes nothing more: its series go.
            metrics.stopped()
            guard let client else { return done() }
            client.dropConnection { done() }
        }
    }

    /// Runs `work` once the mailbox is empty: now, or after the event being handled and what it raised.
    private func whenQuiet(_ work: @escaping () -> Void) {
        if handling { afterMailbox.append(work) } else { work() }
    }

    // MARK: Events

    /// Gives the core one event, carries out its effects, and reads the journal once when they changed it.
    ///
    /// Never re-entered: an event raised while effects are carried out (a
    /// password file that cannot be read, an acknowledgement, the journal
    /// read after a change) waits in the mailbox and is handled after the
    /// whole list, in order — so "the effects, in order" is what happens, and
    /// the last snapshot published is the newest.
    func handle(_ event: DaemonEvent) {
        loop.preconditionIsCurrent()
        mailbox.append(event)
        guard !handling else { return }
        handling = true
        defer {
            handling = false
            let waiting = afterMailbox
            afterMailbox = []
            waiting.forEach { $0() }
        }
        while !mailbox.isEmpty {
            let next = mailbox.removeFirst()
            let wall = loop.wallClock
            for effect in core.handle(next, at: now(), wall: WallTime(seconds: wall, utcOffset: WallClock.utcOffset(wall))) { carryOut(effect) }
            if journalChanged && mailbox.isEmpty {
                journalChanged = false
                readJournal()
            }
        }
    }

    /// Events raised while an event's effects are carried out, handled after them.
    private var mailbox: [DaemonEvent] = []
    private var handling = false
    /// What waits for the mailbox to be empty (`whenQuiet`).
    private var afterMailbox: [() -> Void] = []

    /// The badge and the newest alerts after a change (and the forwarding queues, which the same transaction filled).
    private func readJournal() {
        if let summaries = summaries() { handle(.forwarding(summaries)) }
        let badge = (try? store?.badge()) ?? snapshot.badge
        let recent = (try? store?.alerts(limit: TrayModel.recentLimit)).map(Self.recent) ?? snapshot.recent
        handle(.journalRead(badge: badge, recent: recent))
    }

    private func forwardingChanged() {
        guard let summaries = summaries() else { return }
        handle(.forwarding(summaries))
    }

    /// The forwarding queues as the status shows them (nil without targets).
    private func summaries() -> [ForwardingSummary]? {
        guard let forwarder, let lanes = core.forwarder else { return nil }
        return forwarder.summaries(lanes)
    }

    private static func recent(_ entries: [JournalEntry]) -> [TrayFacts.RecentAlert] {
        entries.prefix(TrayModel.recentLimit).map { TrayFacts.RecentAlert(id: $0.id, title: $0.title, unread: !$0.acknowledged) }
    }

    private func notifierEvent(_ event: Notifier.Event) {
        switch event {
        case .delivered(let kind, let id): handle(.bubble(.shown(kind, id: id)))
        case .actionInvoked(let kind, let key, _): handle(.bubble(.clicked(kind, action: key)))
        case .closed(let kind, .dismissed): handle(.bubble(.dismissed(kind)))
        default: break
        }
    }

    /// The session bus has stayed away: without logind to say whether the
    /// session lives on (or systemd to stop the unit), the session is taken to be over.
    private func sessionBusGone() {
        let keeper: SessionKeeper? =
            process.isTheUserUnit ? .systemd : systemWatch?.followsDesktopSession == true ? .logind : nil
        handle(.sessionBusGone(for: SessionBusFace.busGrace, keeper: keeper))
    }

    /// The wall clock was set: quiet hours may be over, or a budget's slot
    /// free; the forwarding targets decide again now.
    func wallClockChanged() {
        log("the wall clock was set; alerts held for a time are looked at again")
        handle(.forward(.wallClockSet))
    }

    /// The session bus came back: a portal location source used the old connection.
    private func sessionBusReturned() {
        guard locationSource is PortalLocation else { return }
        stopLocationSource()
        handle(.locationSourceLost)
    }

    /// The systemd watchdog (when WatchdogSec= asks for it) and the daily
    /// certificate check: the only wake-ups besides the core's timers.
    private func startPeriodicWork() {
        if let period = process.watchdogPeriod {
            periodic.append(repeating(every: period) { [process] in process.notify("WATCHDOG=1") })
        }
        if let configuration = core.configuration, let certificate = configuration.certificate {
            periodic.append(repeating(every: .seconds(86_400)) { [weak self] in
                guard let facts = try? CredentialFiles.inspect(
                    certificate: certificate, key: configuration.key, passphrase: configuration.bundlePassword, localize: .english)
                else { return }
                self?.metrics.certificateInspected(secondsUntilExpiry: facts.secondsUntilExpiry)
                self?.handle(.certificateInspected(secondsUntilExpiry: facts.secondsUntilExpiry))
            })
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

    private func fileChanged(_ path: String) {
        if path == configurationPath { return checkConfiguration() }
        if path == executable {
            guard let executable, access(executable, X_OK) == 0 else { return }
            return handle(.programReplaced)
        }
        metrics.credentialFileChanged(core.configuration)
        handle(.credentialFileChanged(path: path))
    }

    private func checkConfiguration() {
        handle(.configurationChanged(ConfigurationCheck.read(configurationPath, log: log).reading))
    }

    // MARK: Effects

    private func carryOut(_ effect: DaemonEffect) {
        switch effect {
        case .sendLogin(let user, let sources, let timeout):
            guard let user else { return login(user: nil, password: nil, timeout: timeout) }
            passwordLogin(user: user, from: sources[...], timeout: timeout)
        case .sendKeepAlive(let token, let seq, let fix, let timeout):
            client?.check(session: token, seq: seq, location: fix, timeout: timeout) { self.handle(.keepAliveAnswered($0)) }
        case .sendLogout(let token, let timeout):
            client?.logout(session: token, timeout: timeout) { self.handle(.logoutAnswered) }
        case .dropConnection: client?.dropConnection {}
        case .arm(let which, let instant): timer(which).arm(at: instant.sinceBoot)
        case .cancel(let which): timers[which]?.disarm()
        case .record(let items):
            journal(items.map { ($0.alert, $0.notice) })
        case .show(let alert): desktop.post(alert)
        case .close(let kind): desktop.close(kind)
        case .adopt(let kind, let id): desktop.adopt(kind, shownAs: id)
        case .rememberBubble(let kind, let id): try? store?.setNotificationID(id, forNewest: kind)
        case .acknowledge(let acknowledgement): acknowledge(acknowledgement)
        case .saveSession(let record): saveSession(record)
        case .timeline(var entry):
            guard let store else { return }
            entry.at = loop.wallClock
            do {
                try store.recordTimeline(entry)
                metrics.recorded(entry)
            } catch {
                journalKeeper.failed(error, doing: "record the timeline")
            }
        case .publish(let published, let previous):
            desktop.publish(published, previous: previous)
            metrics.published(published, at: now())
        case .log(let line): log(line)
        case .notifySystemd(let state): process.notify(state)
        case .releaseSleepLock: systemWatch?.releaseSleepLock()
        case .forward(.queuesChanged): forwardingChanged()
        case .forward(let lanes): forwarder?.carryOut(lanes, window: { [core] in core.forwarder?.sentWindow($0) ?? 0 })
        case .checkOutside:
            guard let outsideProbe else { return }
            outsideProbe.check { [weak self] report in self?.handle(.outsideChecked(report)) }
            // NetworkManager's opinion, beside the probe's: a change arrives as `.networkConnectivity`.
            systemWatch?.checkConnectivity()
        case .startLocationSource:
            locationSource = makeLocationSource()
            locationSource?.start()
        case .stopLocationSource: stopLocationSource()
        case .watch(let paths): watch(paths)
        case .checkConfiguration: checkConfiguration()
        case .rememberSetupOffered: rememberSetupOffered()
        case .openSetup:
            if !TerminalLauncher.setup(configurationPath: configurationPath, log: log) { handle(.user(.showStatus(setupCommand: true))) }
        case .openTimeline:
            if !TerminalLauncher.timeline(log: log) { handle(.user(.showStatus(setupCommand: false))) }
        case .restart: process.restart(log)
        case .end: stop { [process] in process.exit(0) }
        }
    }

    private func timer(_ which: DaemonTimer) -> any LoopTimer {
        if let made = timers[which] { return made }
        let made = loop.makeTimer { [weak self] in
            guard let self else { return }
            self.handle(.timerFired(which, sleptSinceBoot: self.process.sleptSinceBoot()))
        }
        timers[which] = made
        return made
    }

    /// The first of `sources` that is there gives the password; one there but unreadable is said.
    private func passwordLogin(user: String, from sources: ArraySlice<PasswordSource>, timeout: Duration) {
        guard let source = sources.first else { return handle(.passwordMissing(user: user, place: .none)) }
        let secret: Result<String, SecretFileProblem>?
        switch source {
        case .credential(let name): secret = SecretFile.credential(name)
        case .file(let path): secret = SecretFile.read(path)
        case .keyring:
            return desktop.password(user: user) { result in
                guard case .success(let password?) = result else { return self.handle(.passwordMissing(user: user, place: .keyring)) }
                self.login(user: user, password: password, timeout: timeout)
            }
        }
        switch secret {
        case .success(let password): login(user: user, password: password, timeout: timeout)
        case .failure(let problem): handle(.passwordMissing(user: user, place: .file(problem: problem.description)))
        case nil: passwordLogin(user: user, from: sources.dropFirst(), timeout: timeout)
        }
    }

    private func login(user: String?, password: String?, timeout: Duration) {
        guard let client else { return }
        client.login(device: device, user: user, password: password, timeout: timeout) { self.handle(.loginAnswered($0)) }
    }

    /// Records alerts before they are shown, all in one transaction; a
    /// notice's id is remembered as seen, and an alert to forward queued in
    /// the outbox, in the same transaction. What could not be journaled (a
    /// full disk) is kept in memory and journaled — and so forwarded — first,
    /// the next time the store can be written.
    private func journal(_ alerts: [(Alert, notice: String?)]) {
        journalChanged = true
        if journalKeeper.record(alerts, forwardTo: { [core] in core.forwarder?.destinations(for: $0) ?? [] }), forwarder != nil {
            handle(.forward(.queued))
        }
        if journalKeeper.hasUnjournaled != keptOut {
            keptOut.toggle()
            handle(.journalKeptOut(keptOut))
        }
    }

    private func acknowledge(_ acknowledgement: Acknowledgement) {
        journalChanged = true
        let count: Int
        switch acknowledgement {
        case .over(let kind, let postedBefore):
            guard let store else { return }
            do {
                count = try store.acknowledge(kind: kind, postedBefore: postedBefore ?? .infinity)
            } catch {
                return journalKeeper.failed(error, doing: "mark the \(kind.rawValue) alerts read")
            }
        case .seen(let kind):
            return acknowledged(acknowledgement, "the \(kind.rawValue) alert") { store throws(StoreError) in try store.acknowledge(kind: kind) }
        case .seenAlert(let id):
            return acknowledged(acknowledgement, "alert \(id)") { store throws(StoreError) in try store.acknowledge(id: id) ? 1 : 0 }
        case .all:
            do throws(DBusError) {
                count = try journalKeeper.acknowledgeAll()
                lastClear = .success(count)
            } catch {
                lastClear = .failure(error)
                return
            }
        }
        handle(.acknowledged(acknowledgement, count: count, nothingUnread: []))
    }

    private func acknowledged(_ acknowledgement: Acknowledgement, _ what: String, _ change: (AlertStore) throws(StoreError) -> Int) {
        guard let (count, nothingUnread) = journalKeeper.acknowledging(what, change) else { return }
        handle(.acknowledged(acknowledgement, count: count, nothingUnread: nothingUnread))
    }

    private func watch(_ paths: [String]) {
        // Not set up yet: the folder is watched (an editor replaces the file); make it if it is not there yet.
        if core.configuration == nil {
            let folder = String(configurationPath[..<(configurationPath.lastIndex(of: "/") ?? configurationPath.startIndex)])
            if !folder.isEmpty { mkdir(folder, 0o700) }
        }
        do {
            fileWatch = try FileWatch(paths: paths, programs: [executable].compactMap { $0 }, loop: loop) { [weak self] path in
                self?.fileChanged(path)
            }
        } catch {
            // Said once: without the watch a changed file is not noticed (a user's inotify instances may be used up).
            log("cannot watch \(paths.joined(separator: ", ")) (\(error)); a changed configuration or certificate takes effect only after: systemctl --user restart ccrelay")
        }
    }

    private func rememberSetupOffered() {
        let folder = String(setupOfferedMarker[..<(setupOfferedMarker.lastIndex(of: "/") ?? setupOfferedMarker.startIndex)])
        var built = ""
        for part in folder.split(separator: "/") {
            built += "/" + part
            mkdir(built, 0o700)
        }
        let descriptor = open(setupOfferedMarker, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        if descriptor >= 0 { close(descriptor) } else { log("cannot remember that setup was offered (\(SystemError.reason(errno))); it is offered again next time") }
    }

    // MARK: Location

    private func stopLocationSource() {
        locationSource?.stop()
        locationSource = nil
    }

    private func makeLocationSource() -> LocationSource {
        let report: (LocationReport<LocationFix>) -> Void = { [weak self] report in self?.handle(.location(report)) }
        let portal =
            switch core.configuration?.locationSource ?? .auto {
            case .portal: true
            case .geoclue: false
            case .auto: access("/.flatpak-info", F_OK) == 0
            }
        if portal, let connection = desktop.connection {
            log("location: asking the Location portal for fixes")
            return PortalLocation(loop: loop, connection: connection, log: log, report: report)
        }
        log("location: asking GeoClue for fixes")
        return GeoClueLocation(loop: loop, desktopID: ControlNames.busName, log: log, report: report)
    }

    // MARK: The saved session

    private func saveSession(_ record: SessionRecord?) {
        guard let store, let configuration = core.configuration else { return }
        let snapshot = record.map {
            SessionSnapshot(
                server: configuration.serverURL, account: configuration.sessionAccount, token: $0.token, ip: $0.ip, interval: $0.interval,
                timeout: $0.timeout, seq: $0.seq,
                deadline: loop.wallClock + Double($0.remaining.components.seconds) + Double($0.remaining.components.attoseconds) / 1e18)
        }
        do {
            try store.saveSession(snapshot)
        } catch {
            journalKeeper.failed(error, doing: "save the session")
        }
    }

    /// The previous run's session, when it is for this server and account and
    /// its deadline has not passed.
    private func carriedSession() -> CarriedSession? {
        guard let store, let configuration = core.configuration else { return nil }
        let saved: SessionSnapshot?
        do {
            saved = try store.savedSession()
        } catch {
            journalKeeper.failed(error, doing: "read the saved session")
            return nil
        }
        guard let saved else { return nil }
        switch saved.use(server: configuration.serverURL, account: configuration.sessionAccount, now: loop.wallClock) {
        case .freshLogin: return nil
        case .drop(let problem):
            log("the saved session cannot be used (\(problem)); logging in afresh")
            try? store.saveSession(nil)
            return nil
        case .carryOn(let carried, let secondsLeft):
            log("carrying on with the session of the previous run (\(secondsLeft) s left)")
            return carried
        }
    }
}

// MARK: ControlTarget

extension Daemon: ControlTarget {
    /// What `GetStatus` answers now: the last published snapshot.
    func status() -> DaemonStatus { status(of: snapshot, at: now(), wallClock: loop.wallClock) }

    func metricsStatus(of snapshot: DaemonSnapshot, at now: Instant) -> MetricsStatus? { metrics.status(of: snapshot, at: now) }

    func request(_ request: UserRequest) { handle(.user(request)) }

    func clearBadge() throws(DBusError) -> UInt32 {
        lastClear = nil
        handle(.user(.clearBadge))
        guard let lastClear else { throw DBusError(.failed, "the journal cannot be used") }
        return UInt32(clamping: try lastClear.get())
    }
    func journal(limit: Int) throws(DBusError) -> [JournalEntry] { try journalKeeper.alerts(limit: limit) }
    func timeline(since: Double) throws(DBusError) -> [TimelineEntry] { try journalKeeper.timeline(since: since) }
}
