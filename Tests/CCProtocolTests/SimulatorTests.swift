import CCProtocol
import CCProtocolAsync
import Foundation
import TestSupport
import Testing

/// The simulator's own behaviour: server-side expiry and its control API.
@Suite struct SimulatorTests {
    @Test func sessionsExpireAfterTimeoutWithoutAKeepAlive() async throws {
        let sim = try CCSimProcess(tls: false, ["--interval", "1", "--timeout", "10"])
        let cc = try CCClient(configuration: ServerConfiguration(url: sim.url), client: ClientInfo(version: "1"), loop: TestLoop.shared)
        // The first keep-alive follows the login on the loop's own thread: no
        // await between them, which a starved test runner could stretch past the timeout.
        let (grant, first): (LoginGrant?, Exchange) = await withCheckedContinuation { continuation in
            TestLoop.shared.execute {
                cc.login(device: "d") { login in
                    guard case .loggedIn(let grant) = login.outcome else { return continuation.resume(returning: (nil, login)) }
                    cc.keepAlive(session: grant.session, seq: 1) { continuation.resume(returning: (grant, $0)) }
                }
            }
        }
        guard let grant else { throw TestSetupError("login: \(first.outcome)") }
        guard case .accepted = first.outcome else {
            Issue.record("within the timeout the keep-alive is accepted: \(first.outcome)")
            return
        }
        #expect(await eventually(timeout: .seconds(30)) { (try? sim.sessions().first?["reason"] as? String) == "expired" })
        guard case .loggedOut("expired", _) = await cc.keepAlive(session: grant.session, seq: 2).outcome else {
            Issue.record("after the timeout the server has logged the session out")
            return
        }
    }

    @Test func controlAPIRefusesNonsenseAndHelpDocumentsIt() throws {
        let sim = try CCSimProcess(tls: false)
        let bad = try sim.control("POST", "fault", ["endpoint": "nowhere", "kind": "hang"]) as? [String: Any]
        #expect(bad?["error"] as? String == "bad_request")
        let unknown = try sim.control("GET", "nothing") as? [String: Any]
        #expect(unknown?["error"] as? String == "not_found")
        let help = try run(buildProductsDirectory.appendingPathComponent("ccsim").path, ["--help"])
        #expect(help.status == 0)
        for endpoint in ["/control/sessions", "/control/kick", "/control/fault", "/control/notice", "/control/settings"] {
            #expect(help.standardOutput.contains(endpoint))
        }
        let refused = try run(buildProductsDirectory.appendingPathComponent("ccsim").path, ["--listen", "0.0.0.0:0"])
        #expect(refused.status == 2 && refused.standardError.contains("loopback"))
    }

    @Test func manyConcurrentSessions() async throws {
        let sim = try CCSimProcess()
        let pki = TestPKI.shared
        let configuration = ServerConfiguration(
            url: sim.url, caFile: pki.caCertificate, certificate: pki.clientCertificate, key: pki.clientKey)
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<8 {
                group.addTask {
                    let cc = try CCClient(configuration: configuration, client: ClientInfo(version: "1"), loop: TestLoop.shared)
                    guard case .loggedIn(let grant) = await cc.login(device: "laptop-\(index)").outcome else { return false }
                    for seq in UInt64(1)...5 {
                        guard case .accepted = await cc.keepAlive(session: grant.session, seq: seq).outcome else { return false }
                    }
                    return true
                }
            }
            for try await ok in group { #expect(ok) }
        }
        let sessions = try sim.sessions()
        #expect(sessions.count == 8)
        #expect(Set(sessions.compactMap { $0["session"] as? String }).count == 8)
        #expect(sessions.allSatisfy { ($0["reports"] as? [Any])?.count == 5 })
    }
}
