import CCRelayCore
import Testing

/// The daemon's own rules, pure (issue 23's first step towards DaemonCore):
/// each one here was a line in the shell before.
@Suite struct DaemonRulesTests {
    @Test func aReplacedCredentialFileLogsInAgainOnlyAfterACredentialRefusal() {
        for code in [ProblemCode.certificateRefused, .certificateUnusable, .certificateExpired] {
            #expect(DaemonRules.logInAgainAfterCredentialFilesChanged(state: .loggedOut, lastProblemCode: code), "\(code)")
        }
        #expect(!DaemonRules.logInAgainAfterCredentialFilesChanged(state: .loggedOut, lastProblemCode: .badCredentials))
        #expect(!DaemonRules.logInAgainAfterCredentialFilesChanged(state: .loggedOut, lastProblemCode: nil))
        #expect(!DaemonRules.logInAgainAfterCredentialFilesChanged(state: .online, lastProblemCode: .certificateRefused),
                "while online a changed file changes nothing")
    }

    @Test func aSleepNobodyAnnouncedIsMoreThanFiveSecondsOfBoottimeAheadOfMonotonic() {
        #expect(DaemonRules.sleptUnannounced(sleptBefore: .seconds(10), sleptNow: .seconds(16), state: .online))
        #expect(!DaemonRules.sleptUnannounced(sleptBefore: .seconds(10), sleptNow: .seconds(15), state: .online), "5 s: timer slack")
        #expect(!DaemonRules.sleptUnannounced(sleptBefore: .seconds(10), sleptNow: .seconds(600), state: .sleeping), "announced")
    }

    @Test func theCertificateIsAnnouncedInItsLastWeekOnly() {
        let day: Int64 = 86_400
        #expect(DaemonRules.expiryWarning(secondsUntilExpiry: 3 * day + 5) == .credentials(.certificateExpiring(days: 3)))
        #expect(DaemonRules.expiryWarning(secondsUntilExpiry: 0) == .credentials(.certificateExpiring(days: 0)))
        #expect(DaemonRules.expiryWarning(secondsUntilExpiry: 7 * day) == nil)
        #expect(DaemonRules.expiryWarning(secondsUntilExpiry: -1) == nil, "expired is the server's refusal, not a warning")
    }

    @Test func ofManyNoticesOnlyTheNewestIsABubbleAndSaysHowManyMoreCame() {
        let notice = { (n: Int) in AlertSubject.notice(id: "n\(n)", title: "t\(n)", body: "", urgency: .normal) }
        let bubbles = DaemonRules.bubbles(for: [notice(1), .backOnline, notice(2), notice(3), .loggedOut(message: nil)])
        #expect(bubbles.map(\.subject) == [.backOnline, notice(3), .loggedOut(message: nil)])
        #expect(bubbles.map(\.moreNotices) == [0, 2, 0])
        #expect(DaemonRules.bubbles(for: [notice(1)]).map(\.moreNotices) == [0])
        #expect(DaemonRules.bubbles(for: []).isEmpty)
    }

    @Test func stoppingSendsOnlyTheLogout() {
        let effects: [SessionEffect] = [.cancelTimer, .sendLogout, .post(.backOnline), .stateChanged(.offline)]
        #expect(DaemonRules.whenStopping(effects) == [.sendLogout])
        #expect(DaemonRules.whenStopping([.cancelTimer]).isEmpty)
    }
}
