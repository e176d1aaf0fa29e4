@testable import CCRelayCore
import CoreVocabulary
import Testing
import Forwarding

/// Drives a `Session` on a virtual clock, firing its one timer like the daemon's timerfd.
struct VirtualDaemon {
    var session: Session
    var now = Instant(sinceBoot: .seconds(1000))
    var timer: Instant?
    var log: [(Instant, SessionEffect)] = []
    /// Off for long runs, which only look at returned effects.
    var keepsLog = true
    var timerFirings = 0

    init(_ settings: SessionSettings = SessionSettings(), noticesSeen: Set<String> = []) {
        session = Session(settings: settings, noticesSeen: noticesSeen)
    }

    @discardableResult
    mutating func send(_ event: SessionEvent) -> [SessionEffect] {
        let effects = session.handle(event, at: now)
        for effect in effects {
            if keepsLog { log.append((now, effect)) }
            switch effect {
            case .armTimer(let at): timer = at
            case .cancelTimer: timer = nil
            default: break
            }
        }
        return effects
    }

    /// Moves time forward, firing the timer whenever it is due; returns the effects.
    @discardableResult
    mutating func advance(_ duration: Duration) -> [SessionEffect] {
        let target = now + duration
        var effects: [SessionEffect] = []
        while let due = timer, due <= target {
            now = max(now, due)
            timer = nil
            timerFirings += 1
            effects += send(.timerFired)
        }
        now = target
        return effects
    }

    /// Advances until the session sends a request (or `limit` passes).
    mutating func nextRequest(within limit: Duration = .seconds(7200)) -> SessionEffect? {
        let end = now + limit
        while now < end {
            guard let due = timer, due <= end else { now = end; return nil }
            let effects = advance(due - now)
            if let request = effects.first(where: \.isRequest) { return request }
        }
        return nil
    }

    mutating func loggedIn(interval: Int = 60, timeout: Int = 180, notices: [NoticeInfo] = []) {
        let login = send(.start)
        precondition(login.contains { if case .sendLogin = $0 { true } else { false } })
        send(.loginAnswered(.loggedIn(interval: interval, timeout: timeout, notices: notices)))
    }

    func posted(_ kind: AlertKind) -> Int {
        log.filter { if case .post(let subject) = $0.1 { subject.kind == kind } else { false } }.count
    }
}

extension SessionEffect {
    var isRequest: Bool {
        switch self {
        case .sendLogin, .sendKeepAlive, .sendLogout: true
        default: false
        }
    }
    var keepAliveSeq: UInt64? { if case .sendKeepAlive(let seq, _) = self { seq } else { nil } }
    var requestTimeout: Duration? {
        switch self {
        case .sendKeepAlive(_, let timeout), .sendLogin(let timeout): timeout
        default: nil
        }
    }
}

@Suite struct SessionTests {
    @Test func steadyKeepAlivesOncePerIntervalWithOneWakeUpEach() {
        var daemon = VirtualDaemon()
        daemon.loggedIn()
        #expect(daemon.session.state == .online)
        #expect(daemon.session.remaining(at: daemon.now) == .seconds(180))
        #expect(daemon.timer == daemon.now + .seconds(60))
        for expected in UInt64(1)...100 {
            let start = daemon.now
            let request = daemon.nextRequest()
            #expect(request?.keepAliveSeq == expected)
            #expect(daemon.now - start == .seconds(60))
            #expect(request?.requestTimeout == .seconds(15))
            daemon.send(.keepAliveAnswered(.accepted(interval: nil, timeout: nil, notices: [])))
        }
        #expect(daemon.timerFirings == 100, "one wake-up per keep-alive")
        #expect(daemon.posted(.keepAliveFailing) == 0)
    }

    @Test func failuresRetryWithBackOffSameSeqBeforeTheDeadlineAndWarnOnce() {
        var daemon = VirtualDaemon()
        daemon.loggedIn()
        _ = daemon.nextRequest()
        daemon.send(.keepAliveAnswered(.accepted(interval: nil, timeout: nil, notices: [])))
        let first = daemon.nextRequest()
        let deadline = daemon.session.deadline!
        var gaps: [Duration] = []
        var last = daemon.now
        daemon.send(.keepAliveAnswered(.transientFailure("503")))
        #expect(daemon.session.state == .failing)
        while let retry = daemon.nextRequest(within: .seconds(600)), retry.keepAliveSeq != nil {
            #expect(retry.keepAliveSeq == first?.keepAliveSeq, "a retry reuses its seq")
            #expect(daemon.now < deadline, "every retry before the deadline")
            #expect(retry.requestTimeout! <= deadline - daemon.now, "a request never outlives remaining")
            gaps.append(daemon.now - last)
            last = daemon.now
            daemon.send(.keepAliveAnswered(.transientFailure("timeout")))
        }
        #expect(gaps.count >= 5)
        #expect(gaps.allSatisfy { $0 >= .milliseconds(500) }, "never a tight loop")
        #expect(gaps[0] >= .milliseconds(500) && gaps[0] <= .seconds(1))
        #expect(gaps[2] >= .seconds(2) && gaps[2] <= .seconds(4), "exponential: about 4 s (jitter 0.5–1)")
        #expect(gaps.allSatisfy { $0 <= .seconds(60) }, "capped at the interval")
        #expect(daemon.posted(.keepAliveFailing) == 1, "warned once per episode")
    }

    @Test func recoveryPostsBackOnlineAndClosesTheFailureAlert() {
        var daemon = VirtualDaemon()
        daemon.loggedIn()
        _ = daemon.nextRequest()
        daemon.send(.keepAliveAnswered(.transientFailure("503")))
        // Fail until the warning is out.
        while daemon.posted(.keepAliveFailing) == 0 {
            _ = daemon.nextRequest()
            daemon.send(.keepAliveAnswered(.transientFailure("503")))
        }
        _ = daemon.nextRequest()
        let effects = daemon.send(.keepAliveAnswered(.accepted(interval: nil, timeout: nil, notices: [])))
        #expect(effects.contains(.post(.backOnline)))
        #expect(effects.contains(.close(.keepAliveFailing)))
        #expect(daemon.session.state == .online)
        // A new episode may warn again.
        _ = daemon.nextRequest()
        daemon.send(.keepAliveAnswered(.transientFailure("503")))
        while daemon.posted(.keepAliveFailing) == 1, let _ = daemon.nextRequest(within: .seconds(300)) {
            daemon.send(.keepAliveAnswered(.transientFailure("503")))
        }
        #expect(daemon.posted(.keepAliveFailing) == 2)
    }

    @Test func expiryLogsInAgainByItselfOrAlerts() {
        for autoRelogin in [true, false] {
            var settings = SessionSettings()
            settings.autoRelogin = autoRelogin
            var daemon = VirtualDaemon(settings)
            daemon.loggedIn()
            var sawLogin = false
            while let request = daemon.nextRequest(within: .seconds(400)) {
                if case .sendLogin = request { sawLogin = true; break }
                daemon.send(.keepAliveAnswered(.transientFailure("down")))
            }
            if autoRelogin {
                #expect(sawLogin && daemon.session.state == .loggingIn)
                let effects = daemon.send(.loginAnswered(.loggedIn(interval: 60, timeout: 180, notices: [])))
                #expect(effects.contains(.post(.backOnline)))
                #expect(daemon.posted(.loggedOut) == 0)
            } else {
                #expect(!sawLogin && daemon.session.state == .loggedOut)
                #expect(daemon.posted(.loggedOut) == 1)
                #expect(daemon.nextRequest(within: .seconds(36_000)) == nil, "nothing more is sent")
            }
        }
    }

    @Test func aKickEndsTheSessionForGoodButAnExpiredReplyRelogs() {
        var daemon = VirtualDaemon()
        daemon.loggedIn()
        _ = daemon.nextRequest()
        daemon.send(.keepAliveAnswered(.loggedOut(reason: "kicked", message: "你已被管理员下线")))
        #expect(daemon.session.state == .loggedOut)
        #expect(daemon.log.contains { $0.1 == .post(.loggedOut(message: "你已被管理员下线")) })
        #expect(daemon.nextRequest(within: .seconds(36_000)) == nil, "never relogin after a kick")

        var expired = VirtualDaemon()
        expired.loggedIn()
        _ = expired.nextRequest()
        let effects = expired.send(.keepAliveAnswered(.loggedOut(reason: "expired", message: nil)))
        #expect(effects.contains(.sendLogin(timeout: .seconds(15))))
        #expect(expired.posted(.loggedOut) == 0)
    }

    @Test(arguments: [CredentialProblem.certificateRejected, .badPassword, .accountDisabled, .onlineElsewhere, .quotaExhausted])
    func permanentRefusalsAreNeverRetried(_ problem: CredentialProblem) {
        var daemon = VirtualDaemon()
        daemon.send(.start)
        let effects = daemon.send(.loginAnswered(.refused(problem, message: nil)))
        #expect(effects.contains(.post(.credentials(problem))))
        #expect(daemon.session.state == .loggedOut)
        #expect(daemon.nextRequest(within: .seconds(360_000)) == nil)
        // The user acts: a new start logs in, and success closes the credentials alert.
        #expect(daemon.send(.start).contains(.sendLogin(timeout: .seconds(15))))
        #expect(daemon.send(.loginAnswered(.loggedIn(interval: 60, timeout: 180, notices: []))).contains(.close(.credentials)))
    }

    @Test func transientLoginFailuresBackOffAndRateLimitsAreHonoured() {
        var daemon = VirtualDaemon()
        daemon.send(.start)
        daemon.send(.loginAnswered(.rateLimited(retryAfter: 30)))
        let before = daemon.now
        #expect(daemon.nextRequest() == .sendLogin(timeout: .seconds(15)))
        #expect(daemon.now - before >= .seconds(30))
        daemon.send(.loginAnswered(.transientFailure("502")))
        #expect(daemon.nextRequest() == .sendLogin(timeout: .seconds(15)))
        #expect(daemon.session.state == .loggingIn)
    }

    @Test func theServerCanChangeIntervalAndTimeoutMidSession() {
        var daemon = VirtualDaemon()
        daemon.loggedIn()
        _ = daemon.nextRequest()
        daemon.send(.keepAliveAnswered(.accepted(interval: 20, timeout: 50, notices: [])))
        #expect(daemon.session.remaining(at: daemon.now) == .seconds(50))
        let start = daemon.now
        _ = daemon.nextRequest()
        #expect(daemon.now - start == .seconds(20))
    }

    @Test func sleepLongerThanTheTimeoutLogsInAgainOnResume() {
        var daemon = VirtualDaemon()
        daemon.loggedIn()
        daemon.advance(.seconds(10))
        let sleeping = daemon.send(.sleeping)
        #expect(sleeping.contains(.readyToSleep), "nothing due soon: sleep at once")
        #expect(daemon.timer == nil)
        #expect(daemon.session.state == .sleeping)
        daemon.advance(.seconds(3600))
        let resumed = daemon.send(.resumed)
        #expect(resumed.first == .dropConnection)
        #expect(resumed.contains(.sendLogin(timeout: .seconds(15))))
        daemon.send(.loginAnswered(.loggedIn(interval: 60, timeout: 180, notices: [])))
        #expect(daemon.session.state == .online)
    }

    @Test func aKeepAliveDueSoonGoesOutBeforeSleepAndAShortSleepKeepsTheSession() {
        var daemon = VirtualDaemon()
        daemon.loggedIn()
        daemon.advance(.seconds(45))
        let sleeping = daemon.send(.sleeping)
        #expect(sleeping.contains { $0.keepAliveSeq == 1 })
        #expect(!sleeping.contains(.readyToSleep), "wait for the last keep-alive")
        let answered = daemon.send(.keepAliveAnswered(.accepted(interval: nil, timeout: nil, notices: [])))
        #expect(answered.contains(.readyToSleep))
        #expect(daemon.session.state == .sleeping)
        daemon.advance(.seconds(100))
        let resumed = daemon.send(.resumed)
        #expect(resumed.contains { $0.keepAliveSeq == 2 }, "keep-alive at once on resume")
    }

    @Test func withoutNetworkNothingIsSentAndNoAlertUntilItReturns() {
        var daemon = VirtualDaemon()
        daemon.loggedIn()
        daemon.send(.connectivity(online: false))
        #expect(daemon.session.state == .noNetwork)
        #expect(daemon.nextRequest(within: .seconds(120)) == nil)
        #expect(daemon.posted(.keepAliveFailing) == 0)
        let back = daemon.send(.connectivity(online: true))
        #expect(back.first == .dropConnection)
        #expect(back.contains { $0.keepAliveSeq == 1 }, "keep-alive at once")
        #expect(daemon.session.state == .online)
    }

    @Test func noticesAreShownOncePerIDEver() {
        let notice = NoticeInfo(id: "n-1", title: "网络维护通知", body: "今晚维护", urgency: .normal)
        let old = NoticeInfo(id: "n-0", title: "old", body: "", urgency: .low)
        var daemon = VirtualDaemon(noticesSeen: ["n-0"])
        daemon.loggedIn(notices: [notice, old])
        for _ in 0..<3 {
            _ = daemon.nextRequest()
            daemon.send(.keepAliveAnswered(.accepted(interval: nil, timeout: nil, notices: [notice, old])))
        }
        #expect(daemon.posted(.notice) == 1)
        #expect(daemon.log.contains { if case .post(.notice(id: "n-1", _, _, _)) = $0.1 { true } else { false } })
        #expect(daemon.session.noticesSeen == ["n-0", "n-1"])
    }

    @Test func withNoticesOffNoneIsShownOrMarkedSeen() {
        var settings = SessionSettings()
        settings.notices = false
        var daemon = VirtualDaemon(settings)
        let notice = NoticeInfo(id: "n-1", title: "网络维护通知", body: "今晚维护", urgency: .critical)
        daemon.loggedIn(notices: [notice])
        _ = daemon.nextRequest()
        daemon.send(.keepAliveAnswered(.accepted(interval: nil, timeout: nil, notices: [notice])))
        #expect(daemon.posted(.notice) == 0)
        #expect(daemon.session.noticesSeen.isEmpty, "turned on later, it is still news")
        #expect(daemon.session.state == .online)
    }

    @Test func aRestoredSessionCarriesOnWithoutALogin() {
        var daemon = VirtualDaemon()
        let effects = daemon.send(.restore(RestoredSession(interval: 60, timeout: 180, remaining: .seconds(100), seq: 41)))
        #expect(effects.contains(.sendKeepAlive(seq: 42, timeout: .seconds(15))))
        #expect(!effects.contains { if case .sendLogin = $0 { true } else { false } })
        #expect(daemon.session.state == .online)
        #expect(daemon.session.remaining(at: daemon.now) == .seconds(100))
        daemon.send(.keepAliveAnswered(.accepted(interval: nil, timeout: nil, notices: [])))
        #expect(daemon.session.remaining(at: daemon.now) == .seconds(180))
        #expect(daemon.nextRequest() == .sendKeepAlive(seq: 43, timeout: .seconds(15)))
        #expect(daemon.posted(.backOnline) == 0)
    }

    @Test func aRestoredSessionTheServerForgotIsReplacedQuietly() {
        var settings = SessionSettings()
        settings.autoRelogin = false
        var daemon = VirtualDaemon(settings)
        daemon.send(.restore(RestoredSession(interval: 60, timeout: 180, remaining: .seconds(100), seq: 7)))
        let relogin = daemon.send(.keepAliveAnswered(.loggedOut(reason: "expired", message: nil)))
        #expect(relogin.contains(.sendLogin(timeout: .seconds(15))))
        daemon.send(.loginAnswered(.loggedIn(interval: 60, timeout: 180, notices: [])))
        #expect(daemon.session.state == .online)
        #expect(daemon.posted(.loggedOut) == 0 && daemon.posted(.backOnline) == 0)
        // Once confirmed, an expiry follows the settings again: no auto-relogin → logout alert.
        let later = daemon.send(.restore(RestoredSession(interval: 60, timeout: 180, remaining: .seconds(100), seq: 7)))
        #expect(later.isEmpty || !later.contains { $0.isRequest })
        _ = daemon.nextRequest()
        daemon.send(.keepAliveAnswered(.loggedOut(reason: "expired", message: nil)))
        #expect(daemon.posted(.loggedOut) == 1)
    }

    @Test func aRestoredSessionTooCloseToItsDeadlineLogsInInstead() {
        var daemon = VirtualDaemon()
        let effects = daemon.send(.restore(RestoredSession(interval: 60, timeout: 180, remaining: .milliseconds(100), seq: 3)))
        #expect(effects.contains(.sendLogin(timeout: .seconds(15))))
    }

    @Test func logoutAndStop() {
        var daemon = VirtualDaemon()
        daemon.loggedIn()
        #expect(daemon.send(.logout).contains(.sendLogout))
        #expect(daemon.session.state == .offline)
        #expect(daemon.nextRequest(within: .seconds(3600)) == nil)

        var settings = SessionSettings()
        settings.logoutOnExit = true
        var exiting = VirtualDaemon(settings)
        exiting.loggedIn()
        #expect(exiting.send(.stop).contains(.sendLogout))
        var staying = VirtualDaemon()
        staying.loggedIn()
        #expect(!staying.send(.stop).contains(.sendLogout))
    }

    /// Thousands of simulated hours against a server that fails at random:
    /// the timing invariants hold throughout.
    @Test func invariantsHoldOverAThousandSimulatedHours() {
        var daemon = VirtualDaemon()
        daemon.keepsLog = false
        var random = SplitMix64(seed: 42)
        daemon.loggedIn()
        let end = daemon.now + .seconds(3600 * 1000)
        var lastRequest = daemon.now
        var requests = 0
        var warningsThisEpisode = 0
        var immediate: SessionEffect?
        while daemon.now < end {
            // A request may follow directly from an answer (a relogin), or from the timer.
            let immediateFollowUp = immediate != nil
            let next = immediate ?? daemon.nextRequest(within: .seconds(7200))
            immediate = nil
            guard let request = next else {
                Issue.record("the session went quiet at \(daemon.now) in state \(daemon.session.state)")
                return
            }
            requests += 1
            #expect(daemon.now - lastRequest >= .milliseconds(500) || requests == 1 || immediateFollowUp)
            lastRequest = daemon.now
            if let timeout = request.requestTimeout, let deadline = daemon.session.deadline, request.keepAliveSeq != nil {
                #expect(timeout <= deadline - daemon.now)
                #expect(daemon.now < deadline)
            }
            let roll = random.next() % 1000
            if case .sendLogin = request {
                let reply: LoginAnswer = roll < 900 ? .loggedIn(interval: 60, timeout: 180, notices: []) : .transientFailure("502")
                immediate = daemon.send(.loginAnswered(reply)).first(where: \.isRequest)
            } else {
                let reply: KeepAliveAnswer = switch roll {
                case 0..<880: .accepted(interval: nil, timeout: nil, notices: [])
                case 880..<990: .transientFailure("timeout")
                case 990..<998: .rateLimited(retryAfter: 5)
                default: .loggedOut(reason: "expired", message: nil)
                }
                let effects = daemon.send(.keepAliveAnswered(reply))
                immediate = effects.first(where: \.isRequest)
                if case .accepted = reply { warningsThisEpisode = 0 }
                warningsThisEpisode += effects.filter { if case .post(.keepAliveFailing) = $0 { true } else { false } }.count
                #expect(warningsThisEpisode <= 1)
            }
        }
        #expect(requests > 55_000, "about one request per minute for 1,000 hours")
    }
}

/// A campus outage longer than the session's timeout (issue 33.3): the
/// session lapses and ccrelay wins it back by itself — that is not "log in
/// again", and the end of it is said (and forwarded) as back online.
@Suite struct OutageTests {
    @Test func aSessionThatLapsedInAnOutageIsNotALogoutAndItsEndIsSaid() {
        var daemon = VirtualDaemon()
        daemon.loggedIn()
        // The server stops answering for longer than the timeout, and for the first logins too.
        var logins = 0
        while let request = daemon.nextRequest(within: .seconds(2000)) {
            if case .sendLogin = request {
                logins += 1
                if logins == 4 { break }
                daemon.send(.loginAnswered(.transientFailure("timeout")))
            } else {
                daemon.send(.keepAliveAnswered(.transientFailure("timeout")))
            }
        }
        #expect(logins == 4)
        #expect(daemon.posted(.loggedOut) == 0, "no 'log in again': ccrelay does it")
        #expect(daemon.log.filter { $0.1 == .post(.sessionLapsed) }.count == 1, "said once")
        let effects = daemon.send(.loginAnswered(.loggedIn(interval: 60, timeout: 180, notices: [])))
        #expect(effects.contains(.post(.backOnline)) && effects.contains(.close(.keepAliveFailing)))
    }

    @Test func aSilentRecoverySaysNothing() {
        var daemon = VirtualDaemon()
        daemon.loggedIn()
        daemon.send(.sleeping)
        daemon.advance(.seconds(3600))
        daemon.send(.resumed)
        let effects = daemon.send(.loginAnswered(.loggedIn(interval: 60, timeout: 180, notices: [])))
        #expect(daemon.session.state == .online && !effects.contains(.post(.backOnline)), "a resume after a long sleep is no news")
    }

    @Test func backOnlineIsForwardedByDefault() {
        #expect(ForwardSelection.standard.kinds.contains(.backOnline))
    }
}
