import CCProtocol
import CCProtocolAsync
import Foundation
import TestSupport
import Testing
import CCRelayCore

/// Every classified outcome, produced by a real fault of the simulator.
@Suite struct OutcomeClassificationTests {
    let pki = TestPKI.shared
    let sim: CCSimProcess
    let cc: CCClient
    let session: String

    // The session outlives a starved test runner: the tests of this suite may
    // start half a minute after init logged in, while the heavy suites hold the pool.
    init() async throws {
        sim = try CCSimProcess(["--interval", "5", "--timeout", "300"])
        cc = try CCClient(
            configuration: ServerConfiguration(
                url: sim.url, caFile: pki.caCertificate, certificate: pki.clientCertificate, key: pki.clientKey,
                requestTimeout: .seconds(10)),
            client: ClientInfo(version: "1.0.0"), loop: TestLoop.shared)
        guard case .loggedIn(let grant) = await cc.login(device: "d").outcome else {
            throw TestSetupError("login failed")
        }
        session = grant.session
    }

    func fault(_ endpoint: String, _ kind: String, _ extra: [String: Any] = [:]) throws {
        try sim.control("POST", "fault", ["endpoint": endpoint, "kind": kind, "count": 1].merging(extra) { $1 })
    }

    func keepAlive(timeout: Duration? = nil) async -> Outcome {
        await cc.keepAlive(session: session, seq: 1, timeout: timeout).outcome
    }

    @Test func serverErrorsAndRateLimits() async throws {
        try fault("keepalive", "status", ["status": 503])
        #expect(await keepAlive() == .serverError(status: 503, message: "injected status 503"))
        try fault("keepalive", "rate-limit", ["retry_after": 7])
        #expect(await keepAlive() == .rateLimited(retryAfter: 7))
        try fault("login", "status", ["status": 502])
        guard case .serverError(502, _) = await cc.login(device: "d").outcome else {
            Issue.record("a 502 on login is a server error")
            return
        }
        #expect(await keepAlive() == .accepted(KeepAliveGrant(interval: 5, timeout: 300, notices: [])), "faults were one-shot")
    }

    @Test func brokenAnswersAreProtocolErrorsOrLostConnections() async throws {
        try fault("keepalive", "garbage")
        #expect(await keepAlive() == .transportFailure(.protocolError("the keep-alive reply is not CC/1 JSON")))
        try fault("keepalive", "oversized")
        #expect(await keepAlive() == .transportFailure(.replyTooLarge))
        try fault("keepalive", "reset")
        guard case .transportFailure(.connectionLost) = await keepAlive() else {
            Issue.record("a reset is a lost connection")
            return
        }
        guard case .accepted = await keepAlive() else {
            Issue.record("the client recovers with a fresh connection")
            return
        }
    }

    @Test func aHangingServerTimesOutWithinTheGivenTime() async throws {
        try fault("keepalive", "hang")
        let started = ContinuousClock.now
        #expect(await keepAlive(timeout: .seconds(1)) == .transportFailure(.timeout))
        #expect(ContinuousClock.now - started < .seconds(8), "the request timeout was honoured")
        try fault("keepalive", "slow", ["delay_ms": 300])
        guard case .accepted = await keepAlive(timeout: .seconds(5)) else {
            Issue.record("a slow answer within the timeout is accepted")
            return
        }
    }

    @Test func sessionEndsAreLoggedOutWithTheServersReason() async throws {
        try sim.control("POST", "kick", ["reason": "admin", "message": "管理员已将你下线"])
        #expect(await keepAlive() == .loggedOut(reason: "admin", message: "管理员已将你下线"))
        guard case .loggedIn(let second) = await cc.login(device: "d").outcome else { throw TestSetupError("relogin") }
        try sim.control("POST", "expire", ["session": second.session])
        guard case .loggedOut("expired", _) = await cc.keepAlive(session: second.session, seq: 1).outcome else {
            Issue.record("an expired session is logged out with reason expired")
            return
        }
        guard case .loggedOut("unknown_session", _) = await cc.keepAlive(session: "no-such-session-token", seq: 1).outcome else {
            Issue.record("an unknown token is logged out")
            return
        }
    }

    @Test func loginRefusalsAreCredentialProblems() async throws {
        for (status, error, expected) in [
            (403, "account_disabled", CredentialRefusal.accountDisabled), (403, "quota_exhausted", .quotaExhausted),
            (409, "online_elsewhere", .onlineElsewhere), (401, "bad_credentials", .badCredentials),
        ] {
            try sim.control("POST", "refuse-logins", ["status": status, "error": error, "message": "refused"])
            #expect(await cc.login(device: "d").outcome == .credentialsRefused(expected, message: "refused"))
        }
        try sim.control("DELETE", "refuse-logins")
        guard case .loggedIn = await cc.login(device: "d").outcome else {
            Issue.record("logins work again")
            return
        }
    }

    @Test func locationRequiredAndFixesArrive() async throws {
        try sim.control("POST", "settings", ["location": "required", "interval": 7, "timeout": 30])
        guard case .locationRequired(let message) = await keepAlive() else {
            Issue.record("a keep-alive without a fix gets 428")
            return
        }
        #expect(message == "请开启定位服务")
        let fix = LocationFix(lat: 30.6586, lon: 104.0648, accuracy: 65, timestamp: "2026-11-29T14:05:00Z")
        #expect(await cc.keepAlive(session: session, seq: 2, location: fix).outcome
                == .accepted(KeepAliveGrant(interval: 7, timeout: 30, notices: [])), "interval and timeout follow the server")
        let reports = try #require(try sim.sessions().first?["reports"] as? [[String: Any]])
        let location = try #require(reports.last?["location"] as? [String: Any])
        #expect(location["lat"] as? Double == 30.6586 && location["accuracy"] as? Double == 65)
        guard case .loggedIn(let grant) = await cc.login(device: "d").outcome else { throw TestSetupError("login") }
        #expect(grant.location == .required)
    }

    @Test func noticesArriveCutToTheirLimit() async throws {
        try sim.control("POST", "notice", ["id": "n-1", "title": "网络维护通知", "body": String(repeating: "维", count: 1500), "urgency": "critical"])
        guard case .accepted(let grant) = await keepAlive() else {
            Issue.record("keep-alive")
            return
        }
        #expect(grant.notices.map(\.id) == ["n-1"])
        #expect(grant.notices.first?.body.count == 1000)
        #expect(grant.notices.first?.urgency == "critical")
    }

    @Test func aClosedPortIsALostConnection() async throws {
        let closed = try CCClient(configuration: ServerConfiguration(url: "http://127.0.0.1:9/"), client: ClientInfo(version: "1"), loop: TestLoop.shared)
        guard case .transportFailure(.connectionLost) = await closed.login(device: "d").outcome else {
            Issue.record("connection refused is a lost connection")
            return
        }
    }
}
