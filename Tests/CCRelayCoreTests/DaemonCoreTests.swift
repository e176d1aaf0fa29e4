@testable import CCRelayCore
import CoreVocabulary
import Testing

/// Drives a `DaemonCore` on a virtual clock, as the shell does: it fires
/// the core's timers when due, keeps a journal in memory (answering each
/// acknowledgement and reading the badge after every change), and records
/// every effect. No loop, no bus, no file.
struct CoreRig {
    var core: DaemonCore
    var now = Instant(sinceBoot: .seconds(1000))
    var timers: [DaemonTimer: Instant] = [:]
    var effects: [DaemonEffect] = []
    /// The journal: every alert recorded, and whether it is read.
    var journal: [(alert: Alert, read: Bool)] = []
    var slept: Duration = .zero
    /// The wall clock given with each event (nil: unknown).
    var wall: WallTime?
    /// For each event from outside (not the journal's answers): how many
    /// publications it made, and whether the last carried the journal's badge.
    var publicationsPerEvent: [(count: Int, badgeIsTheJournals: Bool)] = []
    private var depth = 0

    static let path = "/home/student/.config/ccrelay/ccrelay.conf"
    static let configuration: Configuration = {
        var configuration = Configuration(serverURL: "https://cc.campus.example/")
        configuration.certificate = "/home/student/student.crt"
        configuration.key = "/home/student/student.key"
        return configuration
    }()

    init(_ reading: ConfigurationReading = .usable(CoreRig.configuration)) {
        core = DaemonCore(reading: reading, path: Self.path, localizer: .english)
    }

    var badge: BadgeState {
        let unread = journal.filter { !$0.read && $0.alert.kind.badgeIncrement > 0 }
        return BadgeState(count: unread.count, urgent: unread.contains { $0.alert.urgency == .critical })
    }

    /// One event; what it and the journal's answers asked for is appended to `effects` and returned.
    @discardableResult
    mutating func send(_ event: DaemonEvent) -> [DaemonEffect] {
        depth += 1
        defer { depth -= 1 }
        let made = core.handle(event, at: now, wall: wall)
        effects += made
        var all = made
        var journalChanged = false
        for effect in made {
            switch effect {
            case .arm(let timer, let at): timers[timer] = at
            case .cancel(let timer): timers[timer] = nil
            case .record(let items):
                journal += items.map { ($0.alert, false) }
                journalChanged = true
            case .acknowledge(let acknowledgement):
                journalChanged = true
                all += send(.acknowledged(acknowledgement, count: markRead(acknowledgement), nothingUnread: nothingUnread))
            default: break
            }
        }
        if journalChanged { all += send(.journalRead(badge: badge, recent: [])) }
        if depth == 1 {
            let publications = all.compactMap { if case .publish(let snapshot, _) = $0 { snapshot } else { nil } }
            publicationsPerEvent.append((publications.count, publications.last.map { $0.badge == badge } ?? true))
        }
        return all
    }

    private mutating func markRead(_ acknowledgement: Acknowledgement) -> Int {
        var count = 0
        for index in journal.indices where !journal[index].read {
            let kind = journal[index].alert.kind
            let matches: Bool =
                switch acknowledgement {
                case .over(let over, _), .seen(let over): over == kind
                case .all: true
                case .seenAlert: false
                }
            guard matches else { continue }
            journal[index].read = true
            count += 1
        }
        return count
    }

    private var nothingUnread: [AlertKind] {
        AlertKind.allCases.filter { kind in kind.badgeIncrement > 0 && !journal.contains { !$0.read && $0.alert.kind == kind } }
    }

    /// Moves time on, firing the timers that fall due, in order.
    @discardableResult
    mutating func advance(_ duration: Duration) -> [DaemonEffect] {
        let end = now + duration
        var made: [DaemonEffect] = []
        while let (timer, due) = timers.filter({ $0.value <= end }).min(by: { $0.value < $1.value }) {
            now = max(now, due)
            timers[timer] = nil
            made += send(.timerFired(timer, sleptSinceBoot: slept))
        }
        now = end
        return made
    }

    mutating func start(_ start: DaemonStart = DaemonStart(wallClock: 1_000_000)) { send(.started(start)) }

    mutating func loggedIn(location: ServerLocationPolicy = .none) {
        send(.loginAnswered(LoginResult(
            grant: .init(token: String(repeating: "t", count: 32), ip: "10.1.2.3", location: location), problem: nil, droppedNotices: 0,
            answer: .loggedIn(interval: 60, timeout: 180, notices: []))))
    }

    var publications: [DaemonSnapshot] { effects.compactMap { if case .publish(let snapshot, _) = $0 { snapshot } else { nil } } }
    var shown: [Alert] { effects.compactMap { if case .show(let alert) = $0 { alert } else { nil } } }
    var recorded: [Alert] { effects.compactMap { if case .record(let items) = $0 { items.map(\.alert) } else { nil } }.flatMap { $0 } }
    var logged: [String] { effects.compactMap { if case .log(let line) = $0 { line } else { nil } } }
    func count(_ wanted: DaemonEffect) -> Int { effects.count { $0 == wanted } }
}

/// The daemon's rules, composed (issue 23): each test covers one that was a
/// line of the shell's `Daemon` or `UnconfiguredDaemon` before.
@Suite struct DaemonCoreTests {
    static func broken(_ problems: [ConfigurationIssue], exists: Bool = true) -> ConfigurationReading {
        ConfigurationReading(usable: nil, problems: problems, exists: exists, credentialFiles: ["/home/student/student.crt"])
    }
    static let badCA = ConfigurationIssue(file: CoreRig.path, line: 3, message: "the CA file is a folder", key: "server.ca-file")
    static let badKey = ConfigurationIssue(file: CoreRig.path, line: 6, message: "the key does not belong to the certificate", key: "auth.key")

    @Test func aBrokenConfigurationIsSaidOnceAndAgainOnlyWhenTheProblemChanges() {
        var rig = CoreRig(Self.broken([Self.badCA]))
        rig.start()
        #expect(rig.core.state == .unconfigured)
        #expect(rig.shown.map(\.kind) == [.notSetUp] && rig.recorded.map(\.kind) == [.notSetUp])
        #expect(rig.shown.first?.body.contains("ccrelay.conf:3") == true, "\(rig.shown)")
        #expect(rig.effects.contains(.watch([CoreRig.path, "/home/student/student.crt"])), "the files it names are watched too")
        rig.send(.configurationChanged(Self.broken([Self.badCA])))
        #expect(rig.shown.count == 1, "the same problem is not said again")
        rig.send(.configurationChanged(Self.broken([Self.badKey])))
        #expect(rig.shown.map(\.kind) == [.notSetUp, .credentials], "a certificate problem is the credentials alert")
        #expect(rig.shown.last?.body.contains("ccrelay.conf:6") == true)
        #expect(rig.effects.contains(.acknowledge(.seen(.notSetUp))) && rig.effects.contains(.close(.notSetUp)),
                "the not-set-up bubble gives way")
        #expect(rig.badge.count == 1 && rig.publications.last?.badge.count == 1)
        rig.send(.configurationChanged(.usable(CoreRig.configuration)))
        #expect(rig.effects.last == .restart, "usable: the daemon starts with it")
    }

    @Test func aBrokenConfigurationShownAgainAtTheNextStartIsNotJournaledTwice() {
        var rig = CoreRig(Self.broken([Self.badCA]))
        let body = AlertCatalogue.alert(for: .configurationUnusable(problems: [Self.badCA.description]), localize: .english).body
        rig.start(DaemonStart(
            wallClock: 1_000_000, journal: [JournaledAlert(kind: .notSetUp, body: body, unread: true, notificationID: 42)]))
        #expect(rig.effects.contains(.adopt(.notSetUp, id: 42)), "the bubble of the earlier run is this run's")
        #expect(rig.shown.count == 1 && rig.recorded.isEmpty)
    }

    @Test func aFreshInstallOffersSetupOnceAndRaisesNoAlert() {
        var rig = CoreRig(Self.broken([ConfigurationIssue(file: CoreRig.path, line: 0, message: "no such file")], exists: false))
        rig.start()
        #expect(rig.shown.map(\.kind) == [.status] && rig.recorded.isEmpty)
        #expect(rig.effects.contains(.rememberSetupOffered))
        var again = CoreRig(Self.broken([], exists: false))
        again.start(DaemonStart(wallClock: 1_000_000, setupOffered: true))
        #expect(again.shown.isEmpty, "offered at an earlier login: quiet")
        #expect(again.publications.last?.state == .unconfigured)
        #expect(again.publications.last?.problem?.code == .unconfigured)
        again.send(.user(.login))
        #expect(again.logged.last == "not set up: a login needs a usable \(CoreRig.path)")
    }

    @Test func aChangedFileWhileWaitingIsCheckedAgain() {
        var rig = CoreRig(Self.broken([Self.badKey]))
        rig.start()
        rig.send(.credentialFileChanged(path: "/home/student/student.key"))
        #expect(rig.effects.last == .checkConfiguration)
        var named = Self.broken([Self.badKey])
        named.credentialFiles = ["/home/student/new.crt"]
        rig.send(.configurationChanged(named))
        #expect(rig.effects.suffix(2) == [.watch([CoreRig.path, "/home/student/new.crt"]), .checkConfiguration],
                "the new file is watched, then looked at (a change before the watch is not lost)")
    }

    @Test func theConfiguredDaemonClosesNotSetUpAtStartAndEarlierCredentialsAlertsAtItsFirstLogin() {
        var rig = CoreRig()
        rig.journal = [(Alert(kind: .notSetUp, title: "t", body: "b", urgency: .critical), false),
                       (Alert(kind: .credentials, title: "t", body: "b", urgency: .critical), false)]
        rig.start()
        #expect(rig.effects.contains(.acknowledge(.over(.notSetUp, postedBefore: nil))) && rig.effects.contains(.close(.notSetUp)))
        #expect(!rig.effects.contains(.close(.credentials)))
        rig.loggedIn()
        #expect(rig.effects.contains(.acknowledge(.over(.credentials, postedBefore: 1_000_000))) && rig.effects.contains(.close(.credentials)))
        rig.send(.user(.logout))
        rig.send(.user(.login))
        rig.loggedIn()
        #expect(rig.count(.acknowledge(.over(.credentials, postedBefore: 1_000_000))) == 1, "only the first login of the run")
    }

    @Test func aSessionCarriedOnClosesNoCredentialsAlert() {
        var rig = CoreRig()
        rig.start(DaemonStart(
            wallClock: 1_000_000,
            carriedOn: CarriedSession(
                token: String(repeating: "t", count: 32), ip: "10.1.2.3",
                session: RestoredSession(interval: 60, timeout: 180, remaining: .seconds(100), seq: 7))))
        #expect(rig.effects.contains { if case .sendKeepAlive(_, 8, _, _) = $0 { true } else { false } }, "a keep-alive at once")
        rig.send(.keepAliveAnswered(KeepAliveResult(
            problem: nil, droppedNotices: 0, locationRejected: false, answer: .accepted(interval: nil, timeout: nil, notices: []))))
        #expect(rig.core.state == .online)
        #expect(!rig.effects.contains { if case .acknowledge(.over(.credentials, _)) = $0 { true } else { false } })
    }

    @Test func aReplacedCredentialFileLogsInAgainAfterASecondOfQuietOnlyAfterARefusal() {
        var rig = CoreRig()
        rig.start()
        rig.send(.credentialFileChanged(path: "/home/student/student.key"))
        rig.advance(.seconds(2))
        #expect(rig.logged.allSatisfy { !$0.contains("logging in again") }, "no refusal: nothing to cure")
        rig.send(.loginAnswered(LoginResult(
            grant: nil, problem: ProblemReport(code: .certificateRefused, sentence: "refused"), droppedNotices: 0,
            answer: .refused(.certificateRejected, message: nil))))
        #expect(rig.core.state == .loggedOut)
        rig.send(.credentialFileChanged(path: "/home/student/student.crt"))
        rig.advance(.milliseconds(500))
        rig.send(.credentialFileChanged(path: "/home/student/student.key"))
        rig.advance(.milliseconds(900))
        #expect(rig.core.state == .loggedOut, "still being written")
        rig.advance(.milliseconds(200))
        #expect(rig.logged.contains("/home/student/student.key changed; logging in again"))
        #expect(rig.core.state == .loggingIn)
    }

    /// Issue 33.6: an edited configuration that fails its checks, or a
    /// certificate replaced by an expired one, is said where a student looks
    /// (a bubble, the status) while the old configuration goes on.
    @Test func aBrokenEditOrAnExpiredReplacementIsSaidWhileTheOldConfigurationGoesOn() {
        var rig = CoreRig()
        rig.start()
        rig.send(.credentialFileChanged(path: "/home/student/student.crt"))
        rig.advance(.seconds(2))
        #expect(rig.effects.contains(.checkConfiguration), "a file replaced while online is checked whole")
        let broken = ConfigurationReading(
            usable: nil, problems: [ConfigurationIssue(file: CoreRig.path, line: 0, message: "the client certificate expired on 2026-01-01")],
            exists: true, credentialFiles: [])
        rig.send(.configurationChanged(broken))
        rig.send(.configurationChanged(broken))
        let shown = rig.effects.compactMap { if case .show(let alert) = $0, alert.kind == .notSetUp { alert } else { nil } }
        #expect(shown.count == 1 && shown[0].body.contains("expired on 2026-01-01") && shown[0].body.contains("goes on"), "said once: \(shown)")
        #expect(rig.publications.last?.problem?.code == .configurationUnusable)
        #expect(!rig.effects.contains(.restart), "the old one goes on")
        var fixed = CoreRig.configuration
        fixed.warnBefore = 30
        rig.send(.configurationChanged(.usable(fixed)))
        #expect(rig.effects.contains(.restart) && rig.effects.contains(.acknowledge(.over(.notSetUp, postedBefore: nil))))
    }

    @Test func aSleepNobodyAnnouncedIsSeenAtTheNextTimer() {
        var rig = CoreRig()
        rig.start()
        rig.loggedIn()
        rig.slept = .seconds(3600)
        rig.advance(.seconds(61))
        #expect(rig.logged.contains("the machine slept without notice; resuming"))
        #expect(rig.effects.contains(.dropConnection), "a resume opens a fresh connection")
    }

    @Test func anUpgradeRestartsOnlyOnceNoExchangeIsUnderWay() {
        var rig = CoreRig()
        rig.start()
        #expect(rig.effects.contains { if case .sendLogin = $0 { true } else { false } })
        rig.send(.programReplaced)
        rig.advance(.seconds(2))
        #expect(rig.count(.restart) == 0, "the login is under way")
        rig.loggedIn()
        #expect(rig.count(.restart) == 1)
        let restart = rig.effects.firstIndex(of: .restart) ?? 0
        #expect(rig.effects[..<restart].last.map { if case .saveSession(_?) = $0 { true } else { false } } == true,
                "the session is saved for the new program to carry on")
    }

    @Test func aChangedConfigurationRestartsOnlyWhenItIsValidAndDifferent() {
        var rig = CoreRig()
        rig.start()
        var same = CoreRig.configuration
        same.lines = ["server.url": 9]
        rig.send(.configurationChanged(.usable(same)))
        #expect(rig.count(.restart) == 0, "only the line numbers moved")
        rig.send(.configurationChanged(Self.broken([Self.badCA])))
        #expect(rig.count(.restart) == 0 && rig.logged.last?.hasPrefix("the changed configuration is not used until it is fixed") == true)
        var other = CoreRig.configuration
        other.warnBefore = 30
        rig.send(.configurationChanged(.usable(other)))
        #expect(rig.count(.restart) == 1)
    }

    /// Issue 33.7: "last error … HTTP 503" stayed in the status an hour after the session was fine again.
    @Test func aKeepAliveThatGoesThroughEndsTheLastErrorButNotTheFilesProblem() {
        var rig = CoreRig()
        rig.start()
        rig.loggedIn()
        rig.advance(.seconds(60))
        rig.send(.keepAliveAnswered(KeepAliveResult(
            problem: ProblemReport(code: .serverError, sentence: "the server answered HTTP 503"), droppedNotices: 0,
            locationRejected: nil, answer: .transientFailure("503"))))
        #expect(rig.publications.last?.problem?.code == .serverError, "said while the retry is pending")
        rig.advance(rig.core.session.nextAttempt(at: rig.now) ?? .seconds(1))
        rig.send(.keepAliveAnswered(KeepAliveResult(problem: nil, droppedNotices: 0, locationRejected: nil,
                                                    answer: .accepted(interval: nil, timeout: nil, notices: []))))
        #expect(rig.core.state == .online && rig.publications.last?.problem == nil, "\(String(describing: rig.publications.last?.problem))")
        // An edited file that cannot be used is the file's problem: the session going on does not end it.
        rig.send(.configurationChanged(ConfigurationReading(
            usable: nil, problems: [ConfigurationIssue(file: CoreRig.path, line: 2, message: "unknown key 'intervall'")],
            exists: true, credentialFiles: [])))
        rig.advance(.seconds(60))
        rig.send(.keepAliveAnswered(KeepAliveResult(problem: nil, droppedNotices: 0, locationRejected: nil,
                                                    answer: .accepted(interval: nil, timeout: nil, notices: []))))
        #expect(rig.publications.last?.problem?.code == .configurationUnusable)
        // Nor does a failure between two successes: it would have taken the file's place, and the success cleared it.
        rig.advance(.seconds(60))
        rig.send(.keepAliveAnswered(KeepAliveResult(
            problem: ProblemReport(code: .timeout, sentence: "timed out"), droppedNotices: 0,
            locationRejected: nil, answer: .transientFailure("timeout"))))
        rig.advance(rig.core.session.nextAttempt(at: rig.now) ?? .seconds(1))
        rig.send(.keepAliveAnswered(KeepAliveResult(problem: nil, droppedNotices: 0, locationRejected: nil,
                                                    answer: .accepted(interval: nil, timeout: nil, notices: []))))
        #expect(rig.publications.last?.problem?.code == .configurationUnusable)
    }

    @Test func eachChangeIsPublishedOnceWithTheJournalsBadge() {
        var rig = CoreRig()
        rig.start()
        rig.loggedIn()
        rig.advance(.seconds(60))
        for _ in 0..<20 where rig.badge.count == 0 {
            rig.send(.keepAliveAnswered(KeepAliveResult(
                problem: ProblemReport(code: .timeout, sentence: "timed out"), droppedNotices: 0, locationRejected: nil,
                answer: .transientFailure("timeout"))))
            rig.advance(rig.core.session.nextAttempt(at: rig.now) ?? .seconds(1))
        }
        #expect(rig.core.state == .failing && rig.badge.count == 1, "the keep-alive-failing alert was raised")
        #expect(rig.publicationsPerEvent.allSatisfy { $0.count <= 1 }, "\(rig.publicationsPerEvent.map(\.count))")
        #expect(rig.publicationsPerEvent.allSatisfy { $0.badgeIsTheJournals }, "published after the journal was read")
        #expect(rig.publications.last?.badge.count == 1 && rig.publications.last?.problem?.code == .timeout)
        let quiet = rig.publications.count
        rig.send(.bubble(.shown(.keepAliveFailing, id: 9)))
        #expect(rig.publications.count == quiet, "nothing users see changed: nothing published")
        // A kick changes the state and the journal in one answer: still one publication, with both.
        rig.send(.keepAliveAnswered(KeepAliveResult(
            problem: ProblemReport(code: .loggedOut, sentence: "kicked"), droppedNotices: 0, locationRejected: nil,
            answer: .loggedOut(reason: .kicked, message: nil))))
        #expect(rig.publicationsPerEvent.last?.count == 1 && rig.publicationsPerEvent.last?.badgeIsTheJournals == true)
        #expect(rig.publications.last?.state == .loggedOut && rig.publications.last?.badge.count == 2)
    }

    @Test func stoppingSendsOnlyTheLogoutAndSavesNothingLive() {
        var configuration = CoreRig.configuration
        configuration.logoutOnExit = true
        var rig = CoreRig(.usable(configuration))
        rig.start()
        rig.loggedIn()
        let before = rig.effects.count
        rig.send(.stop)
        let stopping = Array(rig.effects.dropFirst(before))
        #expect(stopping.contains { if case .sendLogout = $0 { true } else { false } })
        #expect(!stopping.contains { if case .publish = $0 { true } else { false } }, "no state change from a daemon on its way out")
        #expect(!stopping.contains { if case .show = $0 { true } else { false } })
        #expect(stopping.contains(.saveSession(nil)), "logged out: no session to carry on")
    }

    @Test func aKeepAliveRefusedFor428AsksForLocationAndTheNextCarriesTheFix() {
        var rig = CoreRig()
        rig.start()
        rig.loggedIn()
        #expect(!rig.effects.contains(.startLocationSource))
        rig.advance(.seconds(60))
        rig.send(.keepAliveAnswered(KeepAliveResult(
            problem: ProblemReport(code: .locationRequired, sentence: "location"), droppedNotices: 0, locationRejected: true,
            answer: .transientFailure("location-required"))))
        #expect(rig.effects.contains(.startLocationSource), "a 428 makes location required")
        let fix = LocationFix(lat: 31.0, lon: 121.4, accuracy: 20, timestamp: "2026-12-02T08:00:00Z")
        rig.send(.location(.fix(fix)))
        rig.advance(rig.core.session.nextAttempt(at: rig.now) ?? .seconds(1))
        #expect(rig.effects.contains { if case .sendKeepAlive(_, _, fix?, _) = $0 { true } else { false } })
    }

    @Test func aMissingPasswordIsAProblemThatNamesTheFix() {
        var configuration = CoreRig.configuration
        configuration.user = "student"
        var rig = CoreRig(.usable(configuration))
        rig.start()
        #expect(rig.effects.contains { if case .sendLogin("student", _, _) = $0 { true } else { false } })
        rig.send(.passwordMissing(user: "student", place: .keyring))
        #expect(rig.core.state == .loggedOut)
        #expect(rig.publications.last?.problem?.code == .noPassword)
        #expect(rig.publications.last?.problem?.sentence.contains("ccrelay login --save-password --user student") == true)
    }

    /// Issue 31.8: the system service's status is read by every local user: its sentences never name the account.
    @Test func theSystemServicesMissingPasswordDoesNotNameTheAccount() {
        for place in [PasswordPlace.none, .file(problem: "cannot read /etc/ccrelay/ccrelay.d/campus-password: permission denied")] {
            var configuration = CoreRig.configuration
            configuration.user = "20231234"
            var rig = CoreRig(.usable(configuration))
            rig.start()
            rig.send(.passwordMissing(user: "20231234", place: place))
            let sentence = rig.publications.last?.problem?.sentence ?? ""
            #expect(rig.publications.last?.problem?.code == .noPassword && !sentence.contains("20231234"), "\(sentence)")
            #expect(!rig.effects.contains { if case .log(let line) = $0 { line.contains("20231234") } else { false } })
        }
    }

    @Test func clearBadgeFromABubbleClosesEveryBubbleItRead() {
        var rig = CoreRig()
        rig.start()
        rig.send(.certificateInspected(secondsUntilExpiry: 3 * 86_400))
        #expect(rig.badge.count == 1)
        rig.send(.bubble(.clicked(.credentials, action: AlertAction.clearBadgeKey)))
        #expect(rig.badge.count == 0 && rig.publications.last?.badge.count == 0)
        #expect(rig.effects.contains(.close(.credentials)) && rig.effects.contains(.close(.loggedOut)))
        #expect(!rig.effects.contains(.close(.status)))
    }

    @Test func manyNoticesInOneReplyAreAllJournaledAndOneBubbleSaysHowManyMore() {
        var rig = CoreRig()
        rig.start()
        let notices = (1...4).map { NoticeInfo(id: "n\($0)", title: "Notice \($0)", body: "b", urgency: .normal) }
        rig.send(.loginAnswered(LoginResult(
            grant: .init(token: String(repeating: "t", count: 32), ip: "10.1.2.3", location: .none), problem: nil, droppedNotices: 2,
            answer: .loggedIn(interval: 60, timeout: 180, notices: notices))))
        #expect(rig.recorded.filter { $0.kind == .notice }.count == 4)
        #expect(rig.shown.filter { $0.kind == .notice }.count == 1)
        #expect(rig.shown.last { $0.kind == .notice }?.body.contains("3 more campus notices") == true)
        #expect(rig.logged.contains { $0.contains("2 malformed") })
    }

    @Test func theSessionBusGoneEndsTheDaemonOnlyWhenNobodyElseSaysWhenTheSessionEnds() {
        var rig = CoreRig()
        rig.start()
        rig.send(.sessionBusGone(for: .seconds(10), keeper: .logind))
        #expect(rig.count(.end) == 0 && rig.logged.last?.contains("still trying (logind says when the session ends)") == true)
        rig.send(.sessionBusGone(for: .seconds(10), keeper: nil))
        #expect(rig.count(.end) == 1)
    }

    /// issue 25: the outside check rides on the session — at the login, after
    /// a recovery, never per keep-alive — and its verdict is published.
    @Test func outsideAccessIsCheckedAtTheLoginAndAfterARecoveryButNotPerKeepAlive() {
        var rig = CoreRig()
        rig.start()
        #expect(rig.count(.checkOutside) == 0, "not before the session is online")
        rig.loggedIn()
        #expect(rig.count(.checkOutside) == 1)
        rig.send(.outsideChecked(OutsideReport(ipv4: FamilyCheck(verdict: .portal, answers: []), ipv6: FamilyCheck(verdict: .limited, answers: []))))
        #expect(rig.publications.last?.outside == .portal && rig.publications.last?.outside6 == .limited)
        #expect(rig.core.state == .online, "a portal never ends the session")
        // Keep-alives for half an hour: the confirmation a minute later, one fallback 20 minutes
        // after it, nothing per keep-alive.
        for _ in 0..<30 {
            rig.advance(.seconds(60))
            rig.send(.keepAliveAnswered(KeepAliveResult(
                problem: nil, droppedNotices: 0, locationRejected: false, answer: .accepted(interval: nil, timeout: nil, notices: []))))
            if rig.effects.last(where: { $0 == .checkOutside }) != nil, rig.timers[.outsideCheck] == nil {
                rig.send(.outsideChecked(OutsideReport(ipv4: FamilyCheck(verdict: .ok, answers: []), ipv6: FamilyCheck(verdict: .limited, answers: []))))
            }
        }
        #expect(rig.count(.checkOutside) == 3, "the login's, its confirmation and one fallback for 30 keep-alives: \(rig.count(.checkOutside))")
        #expect(rig.publications.last?.outside == .ok)
    }

    /// A thousand simulated hours of a server that fails at random, sleeps,
    /// network changes and user commands, through the composed core: a
    /// request is always planned or under way while the user wants to be
    /// online, the published state is the session's, and the badge published
    /// is the journal's.
    @Test func invariantsHoldOverAThousandSimulatedHours() {
        var rig = CoreRig()
        var random = SplitMix64(seed: 7)
        rig.start()
        let end = rig.now + .seconds(3600 * 1000)
        var pending = rig.effects.first(where: \.isRequest)
        var requests = 0
        while rig.now < end {
            let made = pending.map { [$0] } ?? rig.advance(.seconds(30))
            pending = nil
            rig.effects.removeAll(keepingCapacity: true)
            let roll = random.next() % 1000
            switch made.first(where: \.isRequest) {
            case .sendLogin?:
                requests += 1
                let granted = roll < 900
                pending = rig.send(.loginAnswered(LoginResult(
                    grant: granted ? .init(token: String(repeating: "t", count: 32), ip: "10.1.2.3", location: .none) : nil,
                    problem: nil, droppedNotices: 0,
                    answer: granted ? .loggedIn(interval: 60, timeout: 180, notices: []) : .transientFailure("502"))))
                    .first(where: \.isRequest)
            case .sendKeepAlive?:
                requests += 1
                let answer: KeepAliveAnswer = switch roll {
                case 0..<900: .accepted(interval: nil, timeout: nil, notices: [])
                case 900..<995: .transientFailure("timeout")
                default: .loggedOut(reason: "kicked", message: nil)
                }
                pending = rig.send(.keepAliveAnswered(KeepAliveResult(
                    problem: nil, droppedNotices: 0, locationRejected: false, answer: answer))).first(where: \.isRequest)
            default: break
            }
            if random.next() % 500 == 0 {
                rig.send(.system(.connectivity(online: false)))
                pending = rig.send(.system(.connectivity(online: true))).first(where: \.isRequest) ?? pending
            }
            if random.next() % 300 == 0 { pending = rig.send(.user(.login)).first(where: \.isRequest) ?? pending }
            if let last = rig.core.published {
                #expect(last.state == rig.core.state)
                #expect(last.badge == rig.badge)
            }
            let planned = rig.core.session.nextAttempt(at: rig.now) != nil || pending != nil
            // Logged out (and then offline after a network change) the daemon waits for the user; otherwise it acts.
            if ![.loggedOut, .offline].contains(rig.core.state) && !planned {
                Issue.record("nothing planned at \(rig.now) in state \(rig.core.state)")
                return
            }
        }
        // About one a minute while online; after a kick (1 answer in 200) it waits for the user's login.
        #expect(requests > 30_000, "\(requests) requests in 1,000 hours")
    }
}

extension DaemonEffect {
    /// A request to the CC server.
    var isRequest: Bool {
        switch self {
        case .sendLogin, .sendKeepAlive: true
        default: false
        }
    }
}
