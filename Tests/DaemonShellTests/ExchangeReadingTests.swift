@testable import CCProtocol
@testable import DaemonShell
import CCRelayCore
import CurlTransport
import Testing

/// The shell's reading of CC/1 exchanges, without a process: each exchange
/// is read once into the state machine's answer, the status problem, the
/// dropped notices and the location verdict.
@Suite struct ExchangeReadingTests {
    func exchange(_ outcome: Outcome, status: Int = 200) -> Exchange {
        Exchange(outcome: outcome, httpStatus: status, connectionsOpened: 0)
    }

    @Test func anAcceptedKeepAliveCarriesItsTimingNoticesAndDroppedCount() {
        let notice = Notice(id: "n-1", title: "维护", body: "今晚", urgency: "critical")
        let reading = KeepAliveReading(exchange(.accepted(KeepAliveGrant(interval: 30, timeout: nil, notices: [notice], droppedNotices: 3))))
        #expect(reading.answer == .accepted(interval: 30, timeout: nil,
                                           notices: [NoticeInfo(id: "n-1", title: "维护", body: "今晚", urgency: .critical)]))
        #expect(reading.locationRejected == false)
        #expect(reading.droppedNotices == 3)
        #expect(reading.problem == nil)
    }

    @Test func a428IsATransientFailureAndALocationRefusal() {
        let reading = KeepAliveReading(exchange(.locationRequired(message: "fix please"), status: 428))
        #expect(reading.answer == .transientFailure("the campus requires a location fix"))
        #expect(reading.locationRejected == true)
        #expect(reading.problem != nil)
    }

    @Test(arguments: [
        ("expired", LogoutReason.expired), ("kicked", .kicked), ("admin", .admin), ("quota_exhausted", .quotaExhausted),
        ("online_elsewhere", .onlineElsewhere), ("maintenance", .other("maintenance")),
    ])
    func theServersLogoutReasonBecomesTheEnum(_ wire: String, _ reason: LogoutReason) {
        let reading = KeepAliveReading(exchange(.loggedOut(reason: wire, message: "bye"), status: 410))
        #expect(reading.answer == .loggedOut(reason: reason, message: "bye"))
        #expect(reading.locationRejected == nil)
        #expect(reason.description == wire)
    }

    @Test(arguments: [
        (CredentialRefusal.certificateRejected, CredentialProblem.certificateRejected), (.badCredentials, .badPassword),
        (.accountDisabled, .accountDisabled), (.quotaExhausted, .quotaExhausted), (.onlineElsewhere, .onlineElsewhere),
    ])
    func aRefusedLoginIsTheCredentialProblemItNames(_ refusal: CredentialRefusal, _ problem: CredentialProblem) {
        let reading = LoginReading(exchange(.credentialsRefused(refusal, message: "no"), status: 401))
        #expect(reading.answer == .refused(problem, message: "no"))
        #expect(reading.grant == nil)
        #expect(reading.problem != nil)
    }

    @Test func transportFailuresAreTheSameForBothRequests() {
        let cases: [(TransportFailure, LoginAnswer, KeepAliveAnswer)] = [
            (.noNetwork("no route"), .noNetwork, .noNetwork),
            (.serverUntrusted(.unknownIssuer, "x"), .untrusted(.unknownIssuer), .untrusted(.unknownIssuer)),
            (.clientCertificateRefused(.revoked, "x"), .refused(.refusedInHandshake(.revoked), message: nil),
             .refused(.refusedInHandshake(.revoked), message: nil)),
            (.timeout, .transientFailure("timeout"), .transientFailure("timeout")),
        ]
        for (failure, login, keepAlive) in cases {
            #expect(LoginReading(exchange(.transportFailure(failure), status: 0)).answer == login)
            #expect(KeepAliveReading(exchange(.transportFailure(failure), status: 0)).answer == keepAlive)
        }
    }

    @Test func anAnswerThatDoesNotFitTheRequestIsTransient() {
        let reading = LoginReading(exchange(.accepted(KeepAliveGrant(interval: nil, timeout: nil, notices: []))))
        #expect(reading.answer == .transientFailure("an answer that does not fit the request"))
        #expect(reading.grant == nil)
    }

    @Test func aSuccessfulLoginCarriesTheGrant() {
        let grant = LoginGrant(session: String(repeating: "t", count: 32), ip: "10.0.0.7", interval: 60, timeout: 180,
                               location: .required, notices: [], droppedNotices: 0)
        let reading = LoginReading(exchange(.loggedIn(grant)))
        #expect(reading.answer == .loggedIn(interval: 60, timeout: 180, notices: []))
        #expect(reading.grant?.ip == "10.0.0.7" && reading.grant?.location == .required)
        #expect(reading.problem == nil)
    }
}
