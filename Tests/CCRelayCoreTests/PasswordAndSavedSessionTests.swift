@testable import CCRelayCore
import CoreVocabulary
import Testing

/// Two rules that were the shell's (issue 34.2): where a password login
/// looks first, and which saved session a start carries on.
@Suite struct PasswordAndSavedSessionTests {
    static func configuration(passwordFile: String?) -> Configuration {
        var configuration = Configuration(serverURL: "https://cc.campus.example/")
        configuration.user = "student"
        configuration.passwordFile = passwordFile
        return configuration
    }

    @Test func theCredentialFirstThenThePasswordFileThenTheKeyringButNotForTheSystemService() {
        let withFile = Self.configuration(passwordFile: "/etc/ccrelay/pw")
        #expect(PasswordSource.order(for: withFile, systemService: false) == [.credential("campus-password"), .file("/etc/ccrelay/pw"), .keyring])
        #expect(PasswordSource.order(for: withFile, systemService: true) == [.credential("campus-password"), .file("/etc/ccrelay/pw")])
        #expect(PasswordSource.order(for: Self.configuration(passwordFile: nil), systemService: true) == [.credential("campus-password")])
    }

    @Test func thePasswordLoginAsksForTheSourcesInOrder() {
        var rig = CoreRig(.usable(Self.configuration(passwordFile: "/home/student/pw")))
        rig.start()
        #expect(rig.effects.contains(.sendLogin(user: "student", passwordFrom: [.credential("campus-password"), .file("/home/student/pw"), .keyring],
                                                timeout: .seconds(15))), "\(rig.effects)")
    }

    static let now = 1_780_000_000.0
    static func saved(server: String = "https://cc.campus.example/", account: String = "student", deadline: Double = now + 120,
                      token: String = String(repeating: "a", count: 32)) -> SessionSnapshot {
        SessionSnapshot(server: server, account: account, token: token, ip: "10.1.2.3", interval: 60, timeout: 180, seq: 7, deadline: deadline)
    }

    @Test func aSavedSessionIsCarriedOnOnlyForThisServerAndAccountWhileItsDeadlineHasNotPassed() {
        let server = "https://cc.campus.example/"
        guard case .carryOn(let carried, let left) = Self.saved().use(server: server, account: "student", now: Self.now) else {
            Issue.record("not carried on")
            return
        }
        #expect(left == 120 && carried.session.seq == 7 && carried.session.remaining == .seconds(120) && carried.ip == "10.1.2.3")
        #expect(Self.saved(server: "https://other.campus.example/").use(server: server, account: "student", now: Self.now) == .freshLogin)
        #expect(Self.saved(account: "someone").use(server: server, account: "student", now: Self.now) == .freshLogin)
        #expect(Self.saved(deadline: Self.now + 0.5).use(server: server, account: "student", now: Self.now) == .freshLogin, "out of time")
        guard case .drop = Self.saved(token: "not a token").use(server: server, account: "student", now: Self.now) else {
            Issue.record("a damaged row is not dropped")
            return
        }
        guard case .drop = Self.saved(deadline: Self.now + 100_000).use(server: server, account: "student", now: Self.now) else {
            Issue.record("a deadline beyond its timeout is not dropped")
            return
        }
    }
}

/// What a full disk kept out of the journal (issue 34.2): the core asks for
/// it to be journaled again after each exchange while the shell says some wait.
@Suite struct KeptOutOfTheJournalTests {
    @Test func whatAFullDiskKeptOutIsJournaledAgainAfterTheNextExchangeUntilItIsIn() {
        var rig = CoreRig()
        rig.start()
        rig.loggedIn()
        #expect(!rig.effects.contains(.record([])), "nothing waits")
        rig.send(.journalKeptOut(true))
        rig.effects = []
        rig.advance(.seconds(60))
        rig.send(.keepAliveAnswered(KeepAliveResult(problem: nil, droppedNotices: 0, locationRejected: nil, answer: .accepted(interval: nil, timeout: nil, notices: []))))
        #expect(rig.effects.contains(.record([])), "journaled again after the exchange")
        rig.send(.journalKeptOut(false))
        rig.effects = []
        rig.advance(.seconds(60))
        rig.send(.keepAliveAnswered(KeepAliveResult(problem: nil, droppedNotices: 0, locationRejected: nil, answer: .accepted(interval: nil, timeout: nil, notices: []))))
        #expect(!rig.effects.contains(.record([])), "in: not asked again")
    }
}
