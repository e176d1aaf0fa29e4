@testable import CCRelayCore
import CoreVocabulary
import Testing

/// Issue 11's classes at the level of the pure state machine: hostile
/// numbers, the user's last word against a late reply, recovery speed,
/// and the server-trust alert.
@Suite struct SessionFaultTests {
    static let huge = Int.max
    static let accepted = KeepAliveAnswer.accepted(interval: nil, timeout: nil, notices: [])

    @Test(arguments: [Int.max, Int.min, -1, 0, 1, 86_401, 1 << 62])
    func anyTimingNumberIsBoundedAndNeverTraps(value: Int) {
        var daemon = VirtualDaemon()
        daemon.loggedIn(interval: value, timeout: value)
        #expect(daemon.session.interval >= .milliseconds(333) && daemon.session.interval <= .seconds(3600))
        #expect(daemon.session.timeout >= .seconds(1) && daemon.session.timeout <= .seconds(86_400))
        #expect(daemon.timer != nil)
        daemon.send(.keepAliveAnswered(.accepted(interval: value, timeout: value, notices: [])))
        daemon.send(.keepAliveAnswered(.rateLimited(retryAfter: value)))
        _ = daemon.nextRequest()
        daemon.send(.keepAliveAnswered(.rateLimited(retryAfter: value)))
        daemon.send(.loginAnswered(.rateLimited(retryAfter: value)))
        _ = daemon.advance(.seconds(100_000))
        daemon.send(.restore(RestoredSession(interval: value, timeout: value, remaining: .seconds(Int64(value >> 20)), seq: .max)))
    }

    @Test func aTimeoutNotAboveTheIntervalMeansKeepAlivesEveryThirdOfIt() {
        var daemon = VirtualDaemon()
        daemon.loggedIn(interval: 60, timeout: 30)
        #expect(daemon.session.interval == .seconds(10))
        #expect(daemon.session.timeout == .seconds(30))
        let start = daemon.now
        _ = daemon.nextRequest()
        #expect(daemon.now - start == .seconds(10))
        // A keep-alive reply that changes only the timeout is judged with the interval granted before.
        daemon.send(.keepAliveAnswered(.accepted(interval: nil, timeout: 600, notices: [])))
        #expect(daemon.session.interval == .seconds(60))
    }

    @Test func retryAfterIsHonouredUpToTenMinutes() {
        var daemon = VirtualDaemon()
        daemon.send(.start)
        daemon.send(.loginAnswered(.rateLimited(retryAfter: 1_000_000)))
        let start = daemon.now
        _ = daemon.nextRequest()
        #expect(daemon.now - start == .seconds(600))
    }

    @Test func aRestoredSessionNeverOutlivesItsTimeout() {
        var daemon = VirtualDaemon()
        daemon.send(.restore(RestoredSession(interval: 60, timeout: 180, remaining: .seconds(1_000_000_000), seq: 4)))
        #expect(daemon.session.remaining(at: daemon.now) == .seconds(180))
    }

    // MARK: The user's last word

    @Test func aLogoutDuringTheLoginEndsTheSessionThatLoginWins() {
        var daemon = VirtualDaemon()
        daemon.send(.start)
        daemon.send(.logout)
        #expect(daemon.session.state == .offline)
        let late = daemon.send(.loginAnswered(.loggedIn(interval: 60, timeout: 180, notices: [])))
        #expect(late.contains(.sendLogout), "the session granted after the logout is ended with DELETE")
        #expect(daemon.session.state == .offline)
        #expect(daemon.session.deadline == nil)
        #expect(daemon.nextRequest() == nil, "and nothing else is sent")
    }

    @Test func loginLogoutLoginKeepsOneRequestInFlightAndTheLastWordWins() {
        var daemon = VirtualDaemon()
        var logins = 0
        for _ in 0..<1000 {
            logins += daemon.send(.start).filter { if case .sendLogin = $0 { true } else { false } }.count
            daemon.send(.logout)
        }
        logins += daemon.send(.start).filter { if case .sendLogin = $0 { true } else { false } }.count
        #expect(logins == 1, "commands coalesce into the one login in flight")
        let answer = daemon.send(.loginAnswered(.loggedIn(interval: 60, timeout: 180, notices: [])))
        #expect(!answer.contains(.sendLogout))
        #expect(daemon.session.state == .online, "the last word was log in")
    }

    @Test func aKeepAliveAnsweredAfterALogoutDoesNotBringTheSessionBack() {
        var daemon = VirtualDaemon()
        daemon.loggedIn()
        _ = daemon.nextRequest()
        #expect(daemon.send(.logout).contains(.sendLogout))
        daemon.send(.keepAliveAnswered(Self.accepted))
        #expect(daemon.session.state == .offline)
        #expect(daemon.nextRequest() == nil)
        // Logged out and in again while that keep-alive was out: the login follows its answer.
        daemon.loggedIn()
        _ = daemon.nextRequest()
        daemon.send(.logout)
        #expect(!daemon.send(.start).contains { $0.isRequest }, "one request at a time")
        #expect(daemon.send(.keepAliveAnswered(Self.accepted)).contains { if case .sendLogin = $0 { true } else { false } })
    }

    // MARK: Recovery

    @Test func theLoginBackOffStartsAfreshWhenTheSessionIsLost() {
        var settings = SessionSettings()
        settings.backoffCap = .seconds(60)
        var daemon = VirtualDaemon(settings)
        daemon.loggedIn(interval: 2, timeout: 8)
        // Keep-alives fail until the deadline passes: many failures.
        var failedKeepAlives = 0
        while true {
            guard let request = daemon.nextRequest(within: .seconds(20)) else { break }
            guard case .sendKeepAlive = request else {
                // The deadline passed: the first login goes out at once.
                daemon.send(.loginAnswered(.transientFailure("503")))
                break
            }
            daemon.send(.keepAliveAnswered(.transientFailure("503")))
            failedKeepAlives += 1
        }
        #expect(failedKeepAlives >= 4)
        // Now logins: each retry comes within an interval (2 s), not 2^n s.
        for _ in 0..<6 {
            let before = daemon.now
            guard case .sendLogin(let timeout) = daemon.nextRequest(within: .seconds(120)) else {
                Issue.record("a login retry is due")
                return
            }
            #expect(daemon.now - before <= .seconds(2))
            #expect(timeout == .seconds(2), "a login's timeout fits the interval")
            daemon.send(.loginAnswered(.transientFailure("503")))
        }
    }

    @Test func theTimeARequestSpentTimingOutIsNotWaitedAgain() {
        var daemon = VirtualDaemon()
        daemon.loggedIn(interval: 2, timeout: 8)
        guard case .sendKeepAlive(_, let timeout) = daemon.nextRequest() else {
            Issue.record("a keep-alive is due")
            return
        }
        #expect(timeout == .seconds(2), "a keep-alive may take an interval (and at least 2 s)")
        daemon.now = daemon.now + timeout
        daemon.send(.keepAliveAnswered(.transientFailure("timeout")))
        #expect(daemon.session.nextAttempt(at: daemon.now) == .milliseconds(500), "retried at once after a timeout")
        // An immediate refusal still backs off.
        _ = daemon.nextRequest()
        daemon.send(.keepAliveAnswered(.transientFailure("503")))
        #expect(daemon.session.nextAttempt(at: daemon.now)! >= .seconds(1))
    }

    @Test func networkBackAndResumeStartTheBackOffAfresh() {
        var daemon = VirtualDaemon()
        daemon.send(.start)
        for _ in 0..<8 {
            daemon.send(.loginAnswered(.transientFailure("503")))
            _ = daemon.nextRequest()
        }
        daemon.send(.connectivity(online: false))
        let back = daemon.send(.connectivity(online: true))
        #expect(back.contains { if case .sendLogin = $0 { true } else { false } } || daemon.session.nextAttempt(at: daemon.now) == .zero)
        daemon.send(.loginAnswered(.transientFailure("503")))
        #expect(daemon.session.nextAttempt(at: daemon.now)! <= .seconds(1), "the first retry after a phase change is quick")
    }

    // MARK: Server trust

    @Test func anUntrustedServerIsAlertedOnceRetriedAtTheCapAndClosedWhenTrusted() {
        var daemon = VirtualDaemon()
        daemon.send(.start)
        for _ in 0..<3 {
            daemon.send(.loginAnswered(.untrusted(.unknownIssuer)))
            #expect(daemon.session.nextAttempt(at: daemon.now) == .seconds(60))
            _ = daemon.nextRequest()
        }
        #expect(daemon.posted(.serverUntrusted) == 1, "one alert per episode")
        let trusted = daemon.send(.loginAnswered(.loggedIn(interval: 60, timeout: 180, notices: [])))
        #expect(trusted.contains(.close(.serverUntrusted)))
        #expect(daemon.session.state == .online)
    }

    @Test func aRefusalInTheHandshakeStopsRetryingUntilTheUserActs() {
        var daemon = VirtualDaemon()
        daemon.send(.start)
        let refused = daemon.send(.loginAnswered(.refused(.refusedInHandshake(.unknownAuthority), message: nil)))
        #expect(refused.contains(.post(.credentials(.refusedInHandshake(.unknownAuthority)))))
        #expect(daemon.session.state == .loggedOut)
        #expect(daemon.nextRequest() == nil)
        let again = daemon.send(.start)
        #expect(again.contains { if case .sendLogin = $0 { true } else { false } })
        #expect(again.first { $0 == .dropConnection || $0.isRequest } == .dropConnection,
                "a fresh connection first: the kept one still presents the refused certificate")
    }

    @Test func nextAttemptIsZeroInFlightAndNilWhenNothingIsPlanned() {
        var daemon = VirtualDaemon()
        #expect(daemon.session.nextAttempt(at: daemon.now) == nil)
        daemon.send(.start)
        #expect(daemon.session.nextAttempt(at: daemon.now) == .zero)
        daemon.send(.loginAnswered(.loggedIn(interval: 60, timeout: 180, notices: [])))
        #expect(daemon.session.nextAttempt(at: daemon.now) == .seconds(60))
        daemon.send(.logout)
        #expect(daemon.session.nextAttempt(at: daemon.now) == nil)
    }
}
