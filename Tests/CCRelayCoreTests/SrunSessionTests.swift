@testable import CCRelayCore
import CoreVocabulary
import Testing

/// What a Srun portal's session looks like to the user (issue 32), on the
/// session's virtual clock: the portal ends sessions by its own rules and
/// never says why; ccrelay says so, logs in again after the 3 s the portal
/// wants between logins, and stops at a fight.
@Suite struct SrunSessionTests {
    static func srun() -> VirtualDaemon {
        var settings = SessionSettings()
        settings.reloginAfterServerEnd = .seconds(3)
        settings.requestTimeout = .seconds(60)
        var daemon = VirtualDaemon(settings)
        daemon.loggedIn(interval: 60, timeout: 86_400)
        return daemon
    }

    /// The portal's check finds the session gone.
    static func ended(_ daemon: inout VirtualDaemon) {
        guard case .sendKeepAlive? = daemon.nextRequest() else { Issue.record("no check went out"); return }
        daemon.send(.keepAliveAnswered(.loggedOut(reason: .portalEnded, message: nil)))
    }

    @Test func checksGoOutOncePerPollAndNothingBetween() {
        var daemon = Self.srun()
        let start = daemon.now
        for round in 1...5 {
            guard case .sendKeepAlive? = daemon.nextRequest() else { Issue.record("no check"); return }
            #expect(daemon.now - start == .seconds(60 * round), "one check a poll")
            daemon.send(.keepAliveAnswered(.accepted(interval: nil, timeout: nil, notices: [])))
        }
        #expect(daemon.timerFirings == 5, "one wake-up a check")
    }

    @Test func aSessionThePortalEndedIsSaidThenWonBackAfterThreeSecondsAndClosedWithBackOnline() {
        var daemon = Self.srun()
        Self.ended(&daemon)
        #expect(daemon.session.state == .loggedOut)
        #expect(daemon.log.contains { $0.1 == .post(.loggedOut(message: nil)) }, "the logout is said at once")
        let endedAt = daemon.now
        guard case .sendLogin? = daemon.nextRequest() else { Issue.record("no relogin"); return }
        #expect(daemon.now - endedAt == .seconds(3), "after the portal's 3 s")
        daemon.send(.loginAnswered(.loggedIn(interval: 60, timeout: 86_400, notices: [])))
        #expect(daemon.session.state == .online)
        #expect(daemon.log.contains { $0.1 == .post(.backOnline) } && daemon.log.contains { $0.1 == .close(.loggedOut) },
                "the bubble is closed with back-online")
    }

    @Test func threeEndsWithinTenMinutesAreAFightAndNoFurtherLogin() {
        var daemon = Self.srun()
        for _ in 1...2 {
            Self.ended(&daemon)
            guard case .sendLogin? = daemon.nextRequest() else { Issue.record("no relogin"); return }
            daemon.send(.loginAnswered(.loggedIn(interval: 60, timeout: 86_400, notices: [])))
        }
        Self.ended(&daemon)
        #expect(daemon.log.contains { $0.1 == .post(.sessionFought(times: 3, minutes: 10)) }, "the fight is said")
        #expect(daemon.session.state == .loggedOut)
        #expect(daemon.nextRequest(within: .seconds(86_400)) == nil, "never fought on")
        // The user's own Log in starts afresh: the fight's ends no longer count.
        #expect(daemon.send(.start).contains { if case .sendLogin = $0 { true } else { false } })
        daemon.send(.loginAnswered(.loggedIn(interval: 60, timeout: 86_400, notices: [])))
        Self.ended(&daemon)
        #expect(daemon.nextRequest()?.isRequest == true, "one end after the user's login is no fight")
    }

    @Test func endsFurtherApartThanTenMinutesAreNoFight() {
        var daemon = Self.srun()
        for _ in 1...6 {
            // Five minutes of checks the portal answers: the session lives.
            for _ in 1...5 {
                guard case .sendKeepAlive? = daemon.nextRequest() else { Issue.record("no check"); return }
                daemon.send(.keepAliveAnswered(.accepted(interval: nil, timeout: nil, notices: [])))
            }
            Self.ended(&daemon)
            guard case .sendLogin? = daemon.nextRequest() else { Issue.record("no relogin"); return }
            daemon.send(.loginAnswered(.loggedIn(interval: 60, timeout: 86_400, notices: [])))
        }
        #expect(!daemon.log.contains { if case .post(.sessionFought) = $0.1 { true } else { false } })
    }

    @Test func withoutAutoReloginAnEndIsFinal() {
        var settings = SessionSettings()
        settings.reloginAfterServerEnd = .seconds(3)
        settings.autoRelogin = false
        var daemon = VirtualDaemon(settings)
        daemon.loggedIn(interval: 60, timeout: 86_400)
        Self.ended(&daemon)
        #expect(daemon.session.state == .loggedOut && daemon.nextRequest(within: .seconds(86_400)) == nil)
    }

    @Test func ccOnesKickStaysFinal() {
        var daemon = VirtualDaemon()
        daemon.loggedIn()
        _ = daemon.nextRequest()
        daemon.send(.keepAliveAnswered(.loggedOut(reason: "kicked", message: nil)))
        #expect(daemon.nextRequest(within: .seconds(36_000)) == nil, "CC/1 never logs in again after a kick")
    }
}
