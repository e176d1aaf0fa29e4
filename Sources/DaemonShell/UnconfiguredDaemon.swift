import AlertJournal
import DBus
import DesktopServices
import EventLoop
import CCRelayCore
#if canImport(Glibc)
import Glibc
#endif

/// The daemon while there is no usable configuration — not a crash: it stays
/// up, owns its name, reports the state `unconfigured` with the problems
/// (file:line) as `last_error`, serves the journal and the badge, and watches
/// the configuration file and the certificate files it names; the moment
/// they are usable the daemon restarts with them (the same process, exec'd
/// anew). systemd never restart-loops for a configuration problem.
///
/// A file that exists but cannot be used is said once per distinct problem
/// in a critical bubble (journaled, on the badge): the certificate or key it
/// names → `credentials`, anything else → `not-set-up`, naming file:line and
/// the fix; replaced when the problem changes. The configured daemon closes
/// it (the not-set-up one when it starts, the credentials one at its first
/// login). No file at all (a fresh install) is said once, at the first login.
public final class UnconfiguredDaemon: ControlTarget {
    private let loop: any EventScheduler
    let configurationPath: String
    private var problems: [ConfigurationIssue]
    /// The problem the bubble says now (one at a time).
    private var shownProblem: AlertSubject?
    private let version: String
    private let log: (String) -> Void
    private let desktop: any DesktopFace
    private let journalKeeper: JournalKeeper
    private var fileWatch: FileWatch?
    private var watchedFiles: [String] = []
    private var watchdog: (any LoopTimer)?

    /// Connects to the session bus (failing when there is none).
    public init(configurationPath: String, problems: [ConfigurationIssue], version: String, loop: any EventScheduler,
                log: @escaping (String) -> Void) throws {
        self.loop = loop
        self.configurationPath = configurationPath
        self.problems = problems
        self.version = version
        self.log = log
        desktop = try SessionBusFace(loop: loop, log: log)
        journalKeeper = JournalKeeper(path: AlertStore.defaultPath(), log: log, now: { [loop] in Instant(sinceBoot: loop.now) })
        desktop.onAlertEvent = { [weak self, log] event in
            guard let self else { return }
            switch event {
            case .delivered(let kind, let id) where id != 0:
                try? self.journalKeeper.usable()?.setNotificationID(id, forNewest: kind)
            case .actionInvoked(let kind, let key, _):
                if kind != .status { self.acknowledge(kind) }
                switch key {
                case AlertAction.clearBadgeKey: _ = try? self.clearBadge()
                case AlertAction.setUpKey: self.openSetup(log: log)
                case AlertAction.defaultKey where kind != .status: self.showStatus()
                default: break
                }
            case .closed(let kind, .dismissed):
                self.acknowledge(kind)
            default:
                break
            }
        }
        // No session to wait in: a daemon outside systemd ends with its session bus.
        desktop.onBusGone = { [log] in
            guard !ProcessHooks.runsAsTheUserUnit() else { return }
            log("the session bus has been away for \(SessionBusFace.busGrace.components.seconds) s; the desktop session is over, stopping")
            exit(0)
        }
    }

    /// Claims the name and starts watching the configuration; `done` hears why not.
    public func start(done: @escaping (Error?) -> Void) {
        loop.preconditionIsCurrent()
        desktop.start(serving: self, badge: { [weak self] in self?.badge ?? BadgeState(count: 0, urgent: false) }) { error in
            if let error { return done(error) }
            self.watchConfiguration()
            self.keepTheWatchdogFed()
            SystemdNotify.send("READY=1\nSTATUS=unconfigured")
            self.log("not set up: waiting for a usable \(self.configurationPath)")
            for (kind, id) in self.journalKeeper.bubblesOfEarlierRuns() { self.desktop.adopt(kind, shownAs: id) }
            self.offerSetUpOnce()
            self.alertTheProblem()
            done(nil)
        }
    }

    private var badge: BadgeState { (try? journalKeeper.usable()?.badge()) ?? BadgeState(count: 0, urgent: false) }

    private func watchConfiguration() {
        // The folder is watched (an editor replaces the file): make it if it is not there yet.
        let folder = String(configurationPath[..<(configurationPath.lastIndex(of: "/") ?? configurationPath.startIndex)])
        if !folder.isEmpty { mkdir(folder, 0o700) }
        watchedFiles = [configurationPath] + credentialFiles()
        do {
            fileWatch = try FileWatch(paths: watchedFiles, loop: loop) { [weak self] _ in
                self?.configurationChanged()
            }
        } catch {
            log("\(error); once \(configurationPath) is fixed: systemctl --user restart ccrelay")
        }
    }

    /// A fresh install (no configuration file at all) says once — at the
    /// first login, not at every one — how to set up, with a "Set up…"
    /// action; remembered by a file beside the journal. A file that exists
    /// but cannot be used says so in the tray and `ccrelay status`.
    private func offerSetUpOnce() {
        let offered = SetupOffer.markerPath
        let state = String(offered[..<(offered.lastIndex(of: "/") ?? offered.startIndex)])
        guard access(configurationPath, F_OK) != 0, access(offered, F_OK) != 0 else { return }
        showStatus()
        var built = ""
        for part in state.split(separator: "/") {
            built += "/" + part
            mkdir(built, 0o700)
        }
        let descriptor = open(offered, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        if descriptor >= 0 { close(descriptor) } else { log("cannot remember that setup was offered (\(SystemError.reason(errno))); it is offered again next time") }
    }

    /// Under systemd's WatchdogSec=, waiting is alive too.
    private func keepTheWatchdogFed() {
        guard let period = ProcessHooks.systemdWatchdogPeriod() else { return }
        let timer = loop.makeTimer { [weak self] in
            SystemdNotify.send("WATCHDOG=1")
            self?.watchdog?.arm(after: period)
        }
        watchdog = timer
        timer.arm(after: period)
    }

    /// The certificate, key and CA files the configuration names, when it can be read that far:
    /// fixing one of them is what makes it usable.
    private func credentialFiles() -> [String] {
        guard let configuration = ConfigurationFile.load(configurationPath).configuration else { return [] }
        return [configuration.certificate, configuration.key, configuration.caFile].compactMap { $0 }
    }

    /// One critical bubble for what stands in the way, when a file is there
    /// to be fixed; said again only when the problem changes, and journaled
    /// only when the journal does not have it unread already (a start at
    /// the next login shows it again, without a second entry).
    private func alertTheProblem() {
        guard access(configurationPath, F_OK) == 0, !problems.isEmpty else { return }
        let credentials = problems.filter(\.isAboutCredentialFiles)
        let subject: AlertSubject =
            credentials.isEmpty
            ? .configurationUnusable(problems: problems.map(\.description))
            : .credentials(.configuredFilesUnusable(detail: credentials.map(\.description).joined(separator: "; ")))
        guard subject != shownProblem else { return }
        if let shown = shownProblem, shown.kind != subject.kind { acknowledge(shown.kind) }
        shownProblem = subject
        let alert = AlertCatalogue.alert(for: subject, localize: Localization.localizer)
        let unread = (try? journalKeeper.usable()?.alerts(limit: 20, kind: alert.kind)) ?? []
        if !unread.contains(where: { !$0.acknowledged && $0.body == alert.body }) {
            _ = journalKeeper.record([(alert, nil)], forwardTo: { _ in [] })
        }
        desktop.post(alert)
        announceBadge()
    }

    private func configurationChanged() {
        // The file may name other certificate files now: those are the ones to watch, from
        // before the check below (a change after it is then seen by the new watch).
        if [configurationPath] + credentialFiles() != watchedFiles { watchConfiguration() }
        let loaded = ConfigurationCheck.load(configurationPath, log: log)
        guard loaded.configuration != nil else {
            problems = loaded.errors
            desktop.announce([.state])
            alertTheProblem()
            return
        }
        log("\(configurationPath) is usable now; starting with it")
        DaemonProcess.restart(log: log)
    }

    // MARK: ControlTarget

    func status() -> DaemonStatus {
        let badge = self.badge
        // What to do first, then what is wrong: a new user needs the command, not the file's grammar.
        let sentence = "Not set up: run ccrelay setup (it asks for the server and your certificate and tries a login). "
            + "Or write \(configurationPath) (an example: /usr/share/doc/ccrelay/examples/ccrelay.conf; ccrelay.conf in ccrelay(1)); "
            + "the daemon starts the moment it is usable. " + problems.map(\.description).joined(separator: "; ")
        return DaemonStatus(
            state: Self.state, badge: UInt32(clamping: badge.count), urgent: badge.urgent, remaining: nil, ip: "", server: "",
            lastError: sentence, lastErrorCode: Self.state, nextAttempt: nil, interval: 0, timeout: 0, location: "off",
            version: version)
    }

    /// The state name (docs/design.md's states, and this one).
    public static let state = DaemonState.unconfigured.rawValue

    func clearBadge() throws(DBusError) -> UInt32 {
        let count = try journalKeeper.acknowledgeAll()
        // Everything is read, as with the configured daemon: no bubble of it stays on screen or waits.
        for kind in JournalKeeper.badgeKinds { desktop.close(kind) }
        announceBadge()
        return UInt32(clamping: count)
    }

    func requestLogin() { log("not set up: a login needs a usable \(configurationPath)") }

    func showStatus(setupCommand: Bool) {
        let status = self.status()
        var summary = StatusSummary(state: .unconfigured, ip: "", remaining: nil, unread: Int(status.badge), problem: status.lastError)
        summary.setupCommand = setupCommand
        desktop.post(AlertCatalogue.alert(for: .status(summary), localize: Localization.localizer))
    }

    func requestLogout() {}

    func acknowledge(alert id: Int64) {
        acknowledging("alert \(id)") { store throws(StoreError) in try store.acknowledge(id: id) }
    }

    /// A bubble clicked or dismissed: its kind's alerts are read.
    private func acknowledge(_ kind: AlertKind) {
        acknowledging("the \(kind.rawValue) alert") { store throws(StoreError) in try store.acknowledge(kind: kind) }
    }

    /// The same rule as the configured daemon's: the bubbles of kinds with nothing unread close.
    private func acknowledging(_ what: String, _ change: (AlertStore) throws(StoreError) -> Void) {
        for kind in journalKeeper.acknowledging(what, change) { desktop.close(kind) }
        announceBadge()
    }

    private func announceBadge() {
        desktop.announceBadge(badge)
        desktop.announce([.badge])
    }

    func quit() { exit(0) }

    func journal(limit: Int) throws(DBusError) -> [JournalEntry] { try journalKeeper.alerts(limit: limit) }
}
