import CoreVocabulary
import Forwarding

/// The daemon's rules, pure: give it an event and the instant; it answers
/// with effects for the shell (`Daemon`) to carry out. It composes the two
/// pure machines — `Session` decides the keep-alives, `LocationTracker` what
/// they carry — and keeps what lies between them and the user: the token,
/// the problem users see, the badge and the newest alerts, the saved session,
/// the file and upgrade rules, the bubbles of earlier runs, and the state of
/// a daemon without a usable configuration (`unconfigured`, with the alert
/// that names its problem). Whenever what users see changes it publishes a
/// `DaemonSnapshot`. Tested like `Session`, on a virtual clock.
public struct DaemonCore: Sendable {
    /// The configuration it runs with; nil while not set up. (A changed file restarts the daemon: never replaced.)
    public let configuration: Configuration?
    private let configurationPath: String
    private let localizer: Localizer
    /// The commands texts name: the desktop's, or the system service's.
    private let commands: UserCommands
    public private(set) var session: Session
    private var location: LocationTracker<LocationFix>
    /// The forwarding lanes (`[relay]`); nil when no target is configured.
    public private(set) var forwarder: Forwarder?
    /// Whether traffic gets out, apart from the session (`[probe]`).
    private var outside: OutsideAccess

    /// The CC/1 session's token and the address it granted.
    private var token: String?
    private var ip = ""
    /// What went wrong last (for the status).
    private var problem: ProblemReport?
    private var badge = BadgeState(count: 0, urgent: false)
    private var recent: [TrayFacts.RecentAlert] = []
    private var forwarding: [ForwardingSummary] = []
    /// The snapshot last published.
    public private(set) var published: DaemonSnapshot?
    /// What the saved session row holds that a keep-alive does not change.
    private var savedFacts: [String]?
    /// The sleep clock when last looked: it grows only while asleep.
    private var sleptSoFar: Duration = .zero
    /// When this run started (wall clock): its first login proves credentials alerts of earlier runs over.
    private var startedAt = Double.infinity
    private var loggedInThisRun = false
    /// Malformed notices are logged once per run, not with every reply.
    private var droppedNoticesLogged = false
    /// Exchanges with the CC server under way (a restart for an upgrade waits for none).
    private var exchangesInFlight = 0
    /// An upgrade replaced the program: restart once no exchange is under way.
    private var upgradeWaiting = false
    /// The credential file that changed last.
    private var lastChangedFile = ""
    private var stopping = false
    /// Alerts a full disk kept out of the journal wait in the shell's memory.
    private var journalKeptOut = false
    /// The journal changed (alerts recorded or marked read): what users see waits for it to be read.
    private var journalReadOwed = false
    /// The event being handled: the cause of a state change the timeline records.
    private var handling: DaemonEvent?
    /// The state the timeline last recorded.
    private var recordedState = DaemonState.offline
    /// What the portal last said of the account, and the devices it listed
    /// since this session began (a device new to them is an alert, once).
    private var account: AccountFacts?
    private var knownDevices: [AccountFacts.Device]?

    // Not set up: what stands in the way, and the bubble that says so.
    private var configurationProblems: [ConfigurationIssue]
    private var configurationExists: Bool
    private var watched: [String] = []
    private var shownProblem: AlertSubject?
    /// The bodies of unread alerts by kind: the not-set-up bubble shown again at the next login is not journaled twice.
    private var unreadBodies: [AlertKind: Set<String>] = [:]

    /// A daemon for the configuration file at `path` as `reading` found it;
    /// `noticesSeen`: the ids of campus notices shown ever; `badge`: the journal's
    /// unread alerts, so that the first snapshot (the answer to the `GetStatus`
    /// that activated the daemon) counts them; `host`: the machine's name forwarded alerts carry.
    public init(reading: ConfigurationReading, path: String, noticesSeen: Set<String> = [],
                badge: BadgeState = BadgeState(count: 0, urgent: false), localizer: Localizer,
                commands: UserCommands = .desktop, host: String = "") {
        self.commands = commands
        self.badge = badge
        configuration = reading.usable
        configurationPath = path
        self.localizer = localizer
        configurationProblems = reading.problems
        configurationExists = reading.exists
        var settings = SessionSettings()
        let configuration = reading.usable ?? Configuration(serverURL: "")
        settings.warnBefore = .seconds(configuration.warnBefore)
        settings.autoRelogin = configuration.autoRelogin
        settings.logoutOnExit = configuration.logoutOnExit
        settings.notices = configuration.notices
        if configuration.serverProtocol == .srun {
            // A Srun portal ends sessions by its own rules and never says why: log in again (after the
            // 3 s it wants between logins), unless a fight with another device shows; a login may take
            // two slow requests (a challenge took 16 s at one campus).
            settings.reloginAfterServerEnd = .seconds(3)
            settings.requestTimeout = .seconds(60)
        }
        session = Session(settings: settings, noticesSeen: noticesSeen)
        // Location reports are CC/1's: nothing in the Srun path asks for one.
        location = LocationTracker(mode: configuration.serverProtocol == .srun ? .off : configuration.locationMode)
        outside = OutsideAccess(enabled: reading.usable?.probeEnabled ?? false)
        if let usable = reading.usable, !usable.forwardTargets.isEmpty {
            forwarder = Forwarder(
                targets: usable.forwardTargets, selection: usable.forwardSelection, quiet: usable.quiet, host: host, localizer: localizer)
        }
        watched = [path] + reading.credentialFiles
    }

    /// The state users see.
    public var state: DaemonState { configuration == nil ? .unconfigured : session.state }

    /// What users see at `now`.
    public func snapshot(at now: Instant) -> DaemonSnapshot {
        guard let configuration else {
            return DaemonSnapshot(
                state: .unconfigured, badge: badge, problem: ProblemReport(code: .unconfigured, sentence: notSetUpSentence),
                recent: recent)
        }
        var snapshot = DaemonSnapshot(
            state: session.state, badge: badge, deadline: session.deadline, nextAttempt: session.nextAttemptDue, ip: ip,
            server: configuration.serverURL, problem: problem, interval: session.interval, timeout: session.timeout,
            location: location.status, outside: outside.ipv4, outside6: outside.ipv6, outsideCheckedAt: outside.checkedAt,
            forwarding: forwarding, recent: recent, account: account)
        snapshot.serverProtocol = configuration.serverProtocol
        return snapshot
    }

    /// Handles one event at `now` (`wall`: the wall clock read with it, nil when
    /// unknown) and returns what to do, in order.
    public mutating func handle(_ event: DaemonEvent, at now: Instant, wall: WallTime? = nil) -> [DaemonEffect] {
        var effects: [DaemonEffect] = []
        handling = event
        defer { handling = nil }
        switch event {
        case .started(let start): started(start, now, &effects)
        case .timerFired(let timer, let slept): timerFired(timer, slept, now, &effects)
        case .system(let event):
            guard configuration != nil else { break }
            session(event, now, &effects)
        case .network(let online, _):
            guard configuration != nil else { break }
            session(.connectivity(online: online), now, &effects)
        case .networkConnectivity(let said): apply(outside.networkManagerSaid(said, at: now), now, &effects)
        case .passwordMissing(let user, let place):
            let sentence =
                switch place {
                case .keyring: "No password for \(user) is in the keyring. Save it with: ccrelay login --save-password --user \(user)"
                // Not the account: a system service's status is read by every local user.
                case .file(let why): "The campus password cannot be read: \(why)"
                case .none:
                    "No campus password: give the system service one as the systemd credential campus-password "
                        + "(LoadCredential=campus-password:FILE) or with [auth] password-file = FILE (owned by the service's user, mode 0600)"
                }
            problem = ProblemReport(code: .noPassword, sentence: commands.rewrite(sentence))
            effects.append(.log(commands.rewrite(sentence)))
            session(.loginAnswered(.refused(.badPassword, message: nil)), now, &effects)
            exchangeEnded(now, &effects)
        case .loginAnswered(let result): loginAnswered(result, now, &effects)
        case .keepAliveAnswered(let result):
            if case .accepted = result.answer { wentThrough() }
            note(result.problem, droppedNotices: result.droppedNotices, &effects)
            noteAccount(result.account, now, &effects)
            if let rejected = result.locationRejected { apply(location.keepAliveAnswered(rejected: rejected), now, &effects) }
            session(.keepAliveAnswered(result.answer), now, &effects)
            exchangeEnded(now, &effects)
        case .logoutAnswered: exchangeEnded(now, &effects)
        case .configurationChanged(let reading): configurationChanged(reading, now, &effects)
        case .credentialFileChanged(let path):
            // Not set up: any file it names may be what makes it usable.
            guard configuration != nil else {
                effects.append(.checkConfiguration)
                break
            }
            // After a refusal of the credentials the user acted. Certificate and key are
            // often replaced one after the other: the login waits for a second of quiet.
            lastChangedFile = path
            effects.append(.arm(.credentialFilesQuiet, at: now + .seconds(1)))
        case .programReplaced: effects.append(.arm(.programQuiet, at: now + .seconds(1)))
        case .certificateInspected(let seconds):
            if let warning = DaemonRules.expiryWarning(secondsUntilExpiry: seconds) { post([warning], now, &effects) }
        case .location(let report): apply(location.reported(report, at: now), now, &effects)
        case .outsideChecked(let report):
            let before = outside.ipv4
            apply(outside.checked(report, at: now), now, &effects)
            // Every change but the ordinary arrival (not yet known → ok) is worth a line.
            if outside.ipv4 != before && !(before == .unknown && outside.ipv4 == .ok) {
                let answers = outside.answers.filter { !$0.hasPrefix("IPv6 ") }.joined(separator: "; ")
                effects.append(.timeline(TimelineEntry(at: 0, subject: .outside, from: before.rawValue, to: outside.ipv4.rawValue,
                                                       cause: "an outside-access check (\(answers))")))
            }
        case .locationSourceLost:
            guard configuration != nil else { break }
            location.sourceStopped()
            apply(location.start(), now, &effects)
        case .journalRead(let badge, let recent):
            self.badge = badge
            self.recent = recent
            journalReadOwed = false
        case .acknowledged(let acknowledgement, let count, let nothingUnread):
            journalReadOwed = true
            acknowledged(acknowledgement, count: count, nothingUnread: nothingUnread, &effects)
        case .bubble(let bubble): bubbleEvent(bubble, now, &effects)
        case .forwarding(let summaries): forwarding = summaries
        case .forward(let event): forward(event, now, &effects)
        case .user(let request): user(request, now, &effects)
        case .desktopSessionClosed: effects += [.log("the desktop session closed; stopping with it"), .end]
        case .sessionBusGone(let away, let keeper):
            let seconds = away.components.seconds
            if let keeper {
                effects.append(.log("the session bus has been away for \(seconds) s; still trying (\(keeper.rawValue) says when the session ends)"))
            } else {
                effects += [
                    .log("the session bus has been away for \(seconds) s and no logind session says the desktop lives on; stopping with it"),
                    .end,
                ]
            }
        case .stop: stop(now, &effects)
        case .journalKeptOut(let waiting): journalKeptOut = waiting
        }
        // What a full disk kept out of the journal goes in (and out to the targets) after the next exchange: it may have room.
        switch event {
        case .loginAnswered, .keepAliveAnswered, .logoutAnswered: if journalKeptOut { effects.append(.record([])) }
        default: break
        }
        if let wall, let quiet = configuration?.quiet { keepQuiet(quiet, wall, &effects) }
        finish(&effects, now)
        return effects
    }

    /// The effects, and the snapshot when what users see changed (not while
    /// stopping, nor before the journal the effects change has been read: one publication per change).
    private mutating func finish(_ effects: inout [DaemonEffect], _ now: Instant) {
        if effects.contains(where: \.changesTheJournal) { journalReadOwed = true }
        guard !stopping, !journalReadOwed else { return }
        let current = snapshot(at: now)
        guard current != published else { return }
        effects.append(.publish(current, previous: published))
        published = current
    }

    // MARK: Starting and stopping

    private mutating func started(_ start: DaemonStart, _ now: Instant, _ effects: inout [DaemonEffect]) {
        startedAt = start.wallClock
        sleptSoFar = start.sleptSinceBoot
        badge = start.badge
        recent = start.recent
        // Bubbles earlier runs left for unread alerts are this run's to replace or close.
        var adopted: Set<AlertKind> = []
        for entry in start.journal where adopted.insert(entry.kind).inserted {
            if entry.unread, let id = entry.notificationID { effects.append(.adopt(entry.kind, id: id)) }
        }
        for entry in start.journal where entry.unread { unreadBodies[entry.kind, default: []].insert(entry.body) }
        guard let configuration else {
            effects += [
                .watch(watched), .notifySystemd("READY=1\nSTATUS=\(DaemonState.unconfigured.rawValue)"),
                .log("not set up: waiting for a usable \(configurationPath)"),
            ]
            // A fresh install (no file at all) says once — at the first login, not at every one — how to set up.
            if !configurationExists && !start.setupOffered {
                effects += [.show(statusAlert(at: now, setupCommand: false)), .rememberSetupOffered]
            }
            alertTheConfigurationProblem(&effects)
            return
        }
        effects.append(.watch([configurationPath, configuration.certificate, configuration.key, configuration.caFile].compactMap { $0 }))
        // The waiting daemon's "cannot use its configuration" is over: the configuration is usable now.
        effects.append(.acknowledge(.over(.notSetUp, postedBefore: nil)))
        apply(location.start(), now, &effects)
        if let carried = start.carriedOn {
            token = carried.token
            ip = carried.ip
            session(.restore(carried.session), now, &effects)
        } else {
            session(.start, now, &effects)
        }
        effects.append(.notifySystemd("READY=1\nSTATUS=\(session.state.rawValue)"))
    }

    private mutating func stop(_ now: Instant, _ effects: inout [DaemonEffect]) {
        effects.append(.notifySystemd("STOPPING=1"))
        stopping = true
        guard configuration != nil else { return }
        effects += [.cancel(.session), .cancel(.outsideCheck), .stopLocationSource]
        location.sourceStopped()
        // Of what the session wants now, only its logout goes out.
        applySession(DaemonRules.whenStopping(session.handle(.stop, at: now)), now, &effects)
        saveSession(now, &effects)
    }

    // MARK: Timers and files

    private mutating func timerFired(_ timer: DaemonTimer, _ slept: Duration, _ now: Instant, _ effects: inout [DaemonEffect]) {
        switch timer {
        case .session:
            guard configuration != nil else { return }
            // A sleep logind did not announce shows as time CLOCK_BOOTTIME counted and CLOCK_MONOTONIC did not.
            if DaemonRules.sleptUnannounced(sleptBefore: sleptSoFar, sleptNow: slept, state: session.state) {
                effects.append(.log("the machine slept without notice; resuming"))
                session(.sleeping, now, &effects)
                session(.resumed, now, &effects)
            }
            sleptSoFar = slept
            session(.timerFired, now, &effects)
        case .credentialFilesQuiet:
            guard DaemonRules.logInAgainAfterCredentialFilesChanged(state: state, lastProblemCode: problem?.code) else {
                // A file replaced while all works: checked whole (an expired certificate is said now, not at the next login).
                return effects.append(.checkConfiguration)
            }
            effects.append(.log("\(lastChangedFile) changed; logging in again"))
            session(.start, now, &effects)
        case .programQuiet:
            upgradeWaiting = true
            restartForTheUpgradeIfQuiet(now, &effects)
        case .outsideCheck:
            apply(outside.timerFired(at: now), now, &effects)
        }
    }

    /// A valid new configuration restarts the daemon with it; an invalid one
    /// is reported and the running configuration kept. Not set up: the files
    /// it names are watched too, and the problem is said (again when it changes).
    private mutating func configurationChanged(_ reading: ConfigurationReading, _ now: Instant, _ effects: inout [DaemonEffect]) {
        guard let running = configuration else {
            configurationExists = reading.exists
            if reading.usable != nil {
                effects += [.log("\(configurationPath) is usable now; starting with it"), .restart]
                return
            }
            configurationProblems = reading.problems
            // The file may name other certificate files now: those are watched, and looked at again
            // once they are (a change made before the new watch would otherwise go unseen).
            let files = [configurationPath] + reading.credentialFiles
            if files != watched {
                watched = files
                effects += [.watch(files), .checkConfiguration]
            }
            alertTheConfigurationProblem(&effects)
            return
        }
        guard var fresh = reading.usable else {
            let problems = reading.problems.map(\.description)
            effects.append(.log("the changed configuration is not used until it is fixed: \(problems.joined(separator: "; "))"))
            // Said where a student looks (issue 33.6), once a change: the status, a bubble; the old configuration goes on.
            problem = ProblemReport(
                code: .configurationUnusable,
                sentence: commands.rewrite("The changed \(configurationPath) cannot be used; ccrelay goes on with the one it had. "
                    + problems.joined(separator: "; ") + " (fix it, or: ccrelay setup --edit)"))
            let subject = AlertSubject.changedConfigurationUnusable(problems: problems)
            if subject != shownProblem {
                shownProblem = subject
                post([subject], now, &effects)
            }
            return
        }
        if case .changedConfigurationUnusable? = shownProblem {
            // Fixed: its bubble goes, and the restart below starts with the file.
            shownProblem = nil
            effects.append(.acknowledge(.over(.notSetUp, postedBefore: nil)))
        }
        var current = running
        fresh.lines = [:]
        current.lines = [:]
        guard fresh != current else { return }
        effects.append(.log("the configuration changed; restarting with it"))
        saveSession(now, &effects)
        effects.append(.restart)
    }

    private mutating func restartForTheUpgradeIfQuiet(_ now: Instant, _ effects: inout [DaemonEffect]) {
        guard upgradeWaiting, exchangesInFlight == 0 else { return }
        upgradeWaiting = false
        effects.append(.log("the program was replaced (an upgrade); restarting with it"))
        if configuration != nil { saveSession(now, &effects) }
        effects.append(.restart)
    }

    private mutating func exchangeEnded(_ now: Instant, _ effects: inout [DaemonEffect]) {
        exchangesInFlight = max(0, exchangesInFlight - 1)
        restartForTheUpgradeIfQuiet(now, &effects)
    }

    // MARK: Exchanges

    private mutating func loginAnswered(_ result: LoginResult, _ now: Instant, _ effects: inout [DaemonEffect]) {
        if let grant = result.grant {
            wentThrough()
            token = grant.token
            ip = grant.ip
            apply(location.serverAsks(grant.location), now, &effects)
            // The first login of the run worked: the certificate, key and password a credentials
            // alert of an earlier run blamed work now (this run's own expiry warning stays; a
            // session carried on from the last run proves no login and closes nothing).
            if !loggedInThisRun {
                loggedInThisRun = true
                effects.append(.acknowledge(.over(.credentials, postedBefore: startedAt)))
            }
        }
        note(result.problem, droppedNotices: result.droppedNotices, &effects)
        if result.grant != nil {
            // A new session: the devices on the account now are its baseline.
            knownDevices = nil
        }
        noteAccount(result.account, now, &effects)
        session(.loginAnswered(result.answer), now, &effects)
        exchangeEnded(now, &effects)
    }

    /// What the portal said of the account: kept for the status; a device
    /// that was not on the account before (since this session began) is said once.
    private mutating func noteAccount(_ facts: AccountFacts?, _ now: Instant, _ effects: inout [DaemonEffect]) {
        guard let facts else { return }
        account = facts
        guard let known = knownDevices else {
            knownDevices = facts.deviceList
            return
        }
        let fresh = facts.newDevices(since: known)
        knownDevices = known + fresh
        post(fresh.map { .newDevice(kind: $0.kind, address: $0.address) }, now, &effects)
    }

    /// The server let the session on: the problem of the episode before is no longer the status' "last error".
    private mutating func wentThrough() {
        if let code = problem?.code, !DaemonRules.problemsASessionOutlives.contains(code) { problem = nil }
    }

    /// What every exchange leaves behind: its problem (for the status) and dropped notices.
    private mutating func note(_ newProblem: ProblemReport?, droppedNotices: Int, _ effects: inout [DaemonEffect]) {
        // A session's problem does not take the place of the file's: the next success would clear it.
        if let newProblem, !(problem.map { DaemonRules.problemsASessionOutlives.contains($0.code) } ?? false) { problem = newProblem }
        // docs/protocol.md's leniency: a malformed notice is dropped and the reply stands;
        // said once per run (a server may send it with every reply).
        guard droppedNotices > 0, !droppedNoticesLogged else { return }
        droppedNoticesLogged = true
        effects.append(.log("the server sent \(droppedNotices) malformed (or too many) notices; dropped them, the rest of the reply stands"))
    }

    /// Quiet hours, the rule the forwarding lanes follow too (`QuietRule.holds`): a bubble below
    /// critical (or any, with quiet-critical) is journaled and in the tray, not popped up; the status bubble always is.
    private func keepQuiet(_ quiet: QuietRule, _ wall: WallTime, _ effects: inout [DaemonEffect]) {
        effects = effects.map { effect in
            guard case .show(let alert) = effect, alert.kind != .status, quiet.holds(alert.urgency, at: wall.seconds, utcOffset: wall.utcOffset)
            else { return effect }
            return .log("quiet hours: \(alert.kind.rawValue) is in the journal and the tray, not shown")
        }
    }

    /// One event for the forwarding lanes; a refusal is the `relay-refused` alert, the rest the shell's to carry out.
    private mutating func forward(_ event: ForwarderEvent, _ now: Instant, _ effects: inout [DaemonEffect]) {
        guard let lanes = forwarder?.handle(event) else { return }
        for effect in lanes {
            switch effect {
            case .raiseRefusal(let target, let answer): post([.forwardRefused(target: target, answer: answer)], now, &effects)
            case .closeRefusal: effects.append(.close(.forwardRefused))
            case .log(let line): effects.append(.log(line))
            default: effects.append(.forward(effect))
            }
        }
    }

    /// One event for the session, and what follows from it.
    private mutating func session(_ event: SessionEvent, _ now: Instant, _ effects: inout [DaemonEffect]) {
        applySession(session.handle(event, at: now), now, &effects)
        switch event {
        case .loginAnswered, .keepAliveAnswered, .logout: saveSessionIfChanged(now, &effects)
        // Outside access may be back: forwarding targets that failed try at once.
        case .connectivity(online: true), .resumed: forward(.flush, now, &effects)
        default: break
        }
    }

    private mutating func applySession(_ sessionEffects: [SessionEffect], _ now: Instant, _ effects: inout [DaemonEffect]) {
        let posts = sessionEffects.compactMap { if case .post(let subject) = $0 { subject } else { nil } }
        var posted = false
        for effect in sessionEffects {
            switch effect {
            case .sendLogin(let timeout):
                exchangesInFlight += 1
                let sources = configuration.map { PasswordSource.order(for: $0, systemService: commands.systemInstance != nil) } ?? []
                effects.append(.sendLogin(user: configuration?.user, passwordFrom: sources, timeout: timeout))
            case .sendKeepAlive(let seq, let timeout):
                guard let token else { continue }
                exchangesInFlight += 1
                let (fix, locationEffects) = location.keepAliveGoesOut(at: now, interval: session.interval)
                apply(locationEffects, now, &effects)
                effects.append(.sendKeepAlive(token: token, seq: seq, fix: fix, timeout: timeout))
            case .sendLogout:
                guard let token else { continue }
                self.token = nil
                exchangesInFlight += 1
                effects.append(.sendLogout(token: token, timeout: .seconds(5)))
            case .dropConnection: effects.append(.dropConnection)
            case .armTimer(let instant): effects.append(.arm(.session, at: instant))
            case .cancelTimer: effects.append(.cancel(.session))
            case .post:
                // The alerts of one answer are journaled together, where the first of them was.
                if !posted { post(posts, now, &effects) }
                posted = true
            case .close(let kind): effects.append(.close(kind))
            case .stateChanged(let state):
                effects += [.log("state: \(state.rawValue)"), .notifySystemd("STATUS=\(state.rawValue)")]
                if let handling {
                    effects.append(.timeline(TimelineEntry(
                        at: 0, subject: .state, from: recordedState.rawValue, to: state.rawValue, cause: TimelineCause.of(handling))))
                }
                recordedState = state
                // The campus session is back: what waited (a logout alert to an internet target) goes out now.
                if state == .online { forward(.flush, now, &effects) }
                // Each way into `online` (a login, a recovery, a resume, a network change) checks the way out.
                apply(outside.sessionChanged(online: state == .online, at: now), now, &effects)
            case .readyToSleep: effects.append(.releaseSleepLock)
            }
        }
    }

    private mutating func apply(_ outsideEffects: [OutsideEffect], _ now: Instant, _ effects: inout [DaemonEffect]) {
        for effect in outsideEffects {
            switch effect {
            case .check: effects.append(.checkOutside)
            case .arm(let instant): effects.append(.arm(.outsideCheck, at: instant))
            case .cancelTimer: effects.append(.cancel(.outsideCheck))
            case .post(let subject): post([subject], now, &effects)
            case .close(let kind): effects.append(.close(kind))
            }
        }
    }

    private mutating func apply(_ locationEffects: [LocationEffect], _ now: Instant, _ effects: inout [DaemonEffect]) {
        for effect in locationEffects {
            switch effect {
            case .startSource: effects.append(.startLocationSource)
            case .stopSource: effects.append(.stopLocationSource)
            case .alert(let effect): applySession([effect], now, &effects)
            }
        }
    }

    // MARK: Alerts

    /// Journals the alerts for `subjects` in one transaction, then shows one
    /// bubble per kind: of many notices only the newest (DaemonRules.bubbles),
    /// saying how many more came.
    private func post(_ subjects: [AlertSubject], _ now: Instant, _ effects: inout [DaemonEffect]) {
        guard !subjects.isEmpty else { return }
        effects.append(.record(subjects.map { subject in
            if case .notice(let id, _, _, _) = subject { JournalItem(alert: alert(for: subject), notice: id) } else { JournalItem(alert: alert(for: subject)) }
        }))
        for (subject, moreNotices) in DaemonRules.bubbles(for: subjects) {
            var shown = alert(for: subject)
            if moreNotices > 0 {
                shown.body += "\n" + localizer.plural(
                    "%s more campus notice came with it (ccrelay history lists it).",
                    "%s more campus notices came with it (ccrelay history lists them).", count: moreNotices)
            }
            effects.append(.show(shown))
        }
    }

    /// The alert for `subject`, naming this daemon's commands (`sudo ccrelay --system setup` for the system service).
    private func alert(for subject: AlertSubject) -> Alert {
        var alert = AlertCatalogue.alert(for: subject, localize: localizer)
        alert.body = commands.rewrite(alert.body)
        return alert
    }

    private func statusAlert(at now: Instant, setupCommand: Bool) -> Alert {
        var summary = snapshot(at: now).statusSummary(at: now)
        summary.setupCommand = setupCommand
        return alert(for: .status(summary))
    }

    /// Not set up, with a file there to fix: one critical bubble for what
    /// stands in the way (the certificate or key it names → `credentials`,
    /// anything else → `not-set-up`), said again only when the problem
    /// changes, and journaled only when the journal does not have it unread
    /// already (a start at the next login shows it again, without a second entry).
    private mutating func alertTheConfigurationProblem(_ effects: inout [DaemonEffect]) {
        guard configurationExists, !configurationProblems.isEmpty else { return }
        let credentials = configurationProblems.filter(\.isAboutCredentialFiles)
        let subject: AlertSubject =
            credentials.isEmpty
            ? .configurationUnusable(problems: configurationProblems.map(\.description))
            : .credentials(.configuredFilesUnusable(detail: credentials.map(\.description).joined(separator: "; ")))
        guard subject != shownProblem else { return }
        if let shown = shownProblem, shown.kind != subject.kind { effects.append(.acknowledge(.seen(shown.kind))) }
        shownProblem = subject
        let alert = alert(for: subject)
        if unreadBodies[alert.kind, default: []].insert(alert.body).inserted { effects.append(.record([JournalItem(alert: alert)])) }
        effects.append(.show(alert))
    }

    /// What `ccrelay status` says while not set up: what to do first, then what is wrong
    /// (a new user needs the command, not the file's grammar).
    private var notSetUpSentence: String {
        commands.rewrite("Not set up: run ccrelay setup (it asks for the server and your certificate and tries a login). "
            + "Or write \(configurationPath) (an example: /usr/share/doc/ccrelay/examples/ccrelay.conf; every key: man ccrelay.conf); "
            + "the daemon starts the moment it is usable. " + configurationProblems.map(\.description).joined(separator: "; "))
    }

    /// An acknowledgement was carried out: the daemon's own closes its kind
    /// when it marked any read; the user's closes the bubbles of every kind
    /// left with nothing unread (one still on screen, or one waiting for a
    /// notification server, which would pop up, red, long after it was seen).
    private mutating func acknowledged(_ acknowledgement: Acknowledgement, count: Int, nothingUnread: [AlertKind],
                                       _ effects: inout [DaemonEffect]) {
        switch acknowledgement {
        case .over(let kind, _):
            unreadBodies[kind] = nil
            if count > 0 { effects.append(.close(kind)) }
        case .seen, .seenAlert:
            for kind in nothingUnread {
                unreadBodies[kind] = nil
                effects.append(.close(kind))
            }
        case .all:
            // Everything is read: no bubble of it stays on screen or waits to be shown.
            unreadBodies = [:]
            effects += AlertKind.allCases.filter { $0.badgeIncrement > 0 }.map { .close($0) }
        }
    }

    /// Clicking a bubble (any action) or dismissing it acknowledges its alerts; expiry does not.
    private mutating func bubbleEvent(_ event: BubbleEvent, _ now: Instant, _ effects: inout [DaemonEffect]) {
        switch event {
        case .shown(let kind, let id):
            if id != 0 { effects.append(.rememberBubble(kind, id: id)) }
        case .clicked(let kind, let key):
            if kind != .status { effects.append(.acknowledge(.seen(kind))) }
            switch key {
            case AlertAction.reloginKey, AlertAction.loginKey:
                if configuration != nil { session(.start, now, &effects) }
            case AlertAction.logoutKey:
                if configuration != nil { session(.logout, now, &effects) }
            case AlertAction.clearBadgeKey: user(.clearBadge, now, &effects)
            case AlertAction.setUpKey: user(.setUp, now, &effects)
            case AlertAction.defaultKey where kind != .status: user(.showStatus(setupCommand: false), now, &effects)
            default: break
            }
        case .dismissed(let kind):
            effects.append(.acknowledge(.seen(kind)))
        }
    }

    private mutating func user(_ request: UserRequest, _ now: Instant, _ effects: inout [DaemonEffect]) {
        switch request {
        case .login:
            guard configuration != nil else {
                return effects.append(.log("not set up: a login needs a usable \(configurationPath)"))
            }
            // The user's own command starts afresh: the problem of an earlier episode (a kick) is no longer shown.
            problem = nil
            session(.start, now, &effects)
        case .logout:
            guard configuration != nil else { return }
            problem = nil
            session(.logout, now, &effects)
        case .clearBadge: effects.append(.acknowledge(.all))
        case .acknowledge(let id): effects.append(.acknowledge(.seenAlert(id)))
        case .showStatus(let setupCommand): effects.append(.show(statusAlert(at: now, setupCommand: setupCommand)))
        case .setUp: effects.append(.openSetup)
        case .showTimeline: effects.append(.openTimeline)
        case .quit: effects += [.log("quit from the tray"), .end]
        }
    }

    // MARK: The saved session

    /// Writes the session row when what it holds changed (a login, a logout,
    /// a new interval or timeout) — not after every keep-alive, each of which
    /// would append a page to the journal's write-ahead log. A session the
    /// server ended (a kick) is a change too: its row goes, so that a restart
    /// after `kill -9` does not carry on with a dead token.
    private mutating func saveSessionIfChanged(_ now: Instant, _ effects: inout [DaemonEffect]) {
        let live = session.remaining(at: now) != nil
        let facts = live ? token.map { [$0, String(session.interval.components.seconds), String(session.timeout.components.seconds)] } : nil
        guard facts != savedFacts else { return }
        saveSession(now, &effects)
    }

    /// The session row as it is now (also when stopping or restarting, so that
    /// the next run carries on with the latest deadline and seq).
    private mutating func saveSession(_ now: Instant, _ effects: inout [DaemonEffect]) {
        var record: SessionRecord?
        if let token, let remaining = session.remaining(at: now), remaining > .zero {
            record = SessionRecord(
                token: token, ip: ip, interval: Int(session.interval.components.seconds),
                timeout: Int(session.timeout.components.seconds), seq: session.seq, remaining: remaining)
        }
        savedFacts = record?.facts
        effects.append(.saveSession(record))
    }
}
