import CurlTransport
import CCProtocol
import CCProtocolAsync
import Foundation
import TestSupport
import Testing

/// The CC/1 client against the real simulator over real TLS, with
/// certificates made by openssl for this run.
@Suite struct ClientAgainstSimulatorTests {
    let pki = TestPKI.shared
    static let info = ClientInfo(version: "9.9.9")

    func client(_ sim: CCSimProcess, certificate: String? = nil, key: String? = nil, passphrase: String? = nil,
                ca: String?? = nil, pin: String? = nil, requestTimeout: Duration = .seconds(10)) throws -> CCClient {
        try CCClient(
            configuration: ServerConfiguration(
                url: sim.url, caFile: ca ?? pki.caCertificate, pinnedKey: pin,
                certificate: certificate ?? pki.clientCertificate, key: certificate == nil ? pki.clientKey : key,
                keyPassphrase: passphrase, requestTimeout: requestTimeout),
            client: Self.info, loop: TestLoop.shared)
    }

    func grant(_ exchange: Exchange) throws -> LoginGrant {
        guard case .loggedIn(let grant) = exchange.outcome else {
            throw TestSetupError("login failed: \(exchange.outcome)")
        }
        return grant
    }

    @Test func loginKeepAliveLogoutOverMutualTLS() async throws {
        let sim = try CCSimProcess(["--interval", "30", "--timeout", "90"])
        let cc = try client(sim)
        let login = try grant(await cc.login(device: "test-laptop"))
        #expect(login.interval == 30 && login.timeout == 90)
        #expect(login.ip == "127.0.0.1")
        #expect(login.location == .none)
        #expect(!login.description.contains(login.session), "the token never appears in descriptions")
        for seq in UInt64(1)...3 {
            let exchange = await cc.keepAlive(session: login.session, seq: seq)
            guard case .accepted(let accepted) = exchange.outcome else {
                Issue.record("keep-alive \(seq): \(exchange.outcome)")
                return
            }
            #expect(accepted.interval == 30)
            #expect(exchange.httpStatus == 200)
        }
        #expect(await cc.logout(session: login.session).outcome == .loggedOutByRequest)
        #expect(await cc.logout(session: login.session).outcome == .loggedOutByRequest, "already over is success too")
        let session = try #require(try sim.sessions().first)
        #expect(session["certificate"] as? String == "20231234", "the simulator saw the student certificate")
        #expect(session["device"] as? String == "test-laptop")
        #expect(session["user_agent"] as? String == "ccrelay/9.9.9 (linux)")
        #expect((session["reports"] as? [[String: Any]])?.map { $0["seq"] as? Int } == [1, 2, 3])
        #expect(session["reason"] as? String == "logout")
    }

    @Test func keepAlivesReuseOneTLSConnection() async throws {
        let sim = try CCSimProcess()
        let cc = try client(sim)
        let login = try grant(await cc.login(device: "d"))
        var opened: [Int] = []
        for seq in UInt64(1)...10 {
            let exchange = await cc.keepAlive(session: login.session, seq: seq)
            #expect(exchange.httpStatus == 200)
            opened.append(exchange.connectionsOpened)
        }
        #expect(opened == Array(repeating: 0, count: 10), "no new connection after login")
        #expect(try sim.connections() == 1)
        await cc.dropConnection()
        #expect(await cc.keepAlive(session: login.session, seq: 11).connectionsOpened == 1, "a fresh connection after a drop")
        #expect(try sim.connections() == 2)
    }

    @Test func pkcs12AndCombinedPEMWork() async throws {
        let sim = try CCSimProcess()
        let p12 = try client(sim, certificate: pki.clientPKCS12, passphrase: pki.pkcs12Passphrase)
        _ = try grant(await p12.login(device: "p12"))
        let combined = try client(sim, certificate: pki.clientCombined)
        _ = try grant(await combined.login(device: "pem"))
        #expect(try sim.sessions().allSatisfy { $0["certificate"] as? String == "20231234" })
    }

    @Test func credentialFileProblemsAreClearErrorsNamingTheFile() throws {
        let sim = try CCSimProcess()
        let wrongPassphrase = #expect(throws: ClientConfigurationError.self) {
            _ = try client(sim, certificate: pki.clientPKCS12, passphrase: "wrong")
        }
        #expect(wrongPassphrase?.message.contains("cannot be opened with the password in the keyring") == true)
        let missing = #expect(throws: ClientConfigurationError.self) {
            _ = try client(sim, certificate: "/nonexistent/student.pem", key: pki.clientKey)
        }
        #expect(missing?.message.contains("/nonexistent/student.pem") == true)
        let expired = #expect(throws: ClientConfigurationError.self) {
            _ = try client(sim, certificate: pki.expiredCertificate, key: pki.expiredKey)
        }
        #expect(expired?.message.contains("expired on 2020-02-01") == true)
        let open = pki.directory + "/open.key"
        try? FileManager.default.removeItem(atPath: open)
        try FileManager.default.copyItem(atPath: pki.clientKey, toPath: open)
        chmod(open, 0o644)
        let readable = #expect(throws: ClientConfigurationError.self) {
            _ = try client(sim, certificate: pki.clientCertificate, key: open)
        }
        #expect(readable?.message.contains("chmod 600 \(open)") == true)
        let noKey = #expect(throws: ClientConfigurationError.self) {
            _ = try client(sim, certificate: pki.clientCertificate, key: nil)
        }
        #expect(noKey?.message.contains("no private key") == true)
    }

    @Test func certificateFactsComeFromOpenSSL() throws {
        let facts = try CredentialFiles.inspect(certificate: pki.clientCertificate, key: pki.clientKey, passphrase: nil, localize: .english)
        #expect(facts.subject.contains("CN=20231234"))
        #expect((28...30).contains(facts.daysUntilExpiry))
        let p12 = try CredentialFiles.inspect(certificate: pki.clientPKCS12, key: nil, passphrase: pki.pkcs12Passphrase, localize: .english)
        #expect(p12.subject == facts.subject)
        let expired = try CredentialFiles.inspect(certificate: pki.expiredCertificate, key: pki.expiredKey, passphrase: nil, localize: .english)
        #expect(expired.secondsUntilExpiry < 0 && expired.notAfterDate == "2020-02-01")
    }

    @Test func serverTrustAndPinning() async throws {
        let sim = try CCSimProcess()
        let untrusted = try client(sim, ca: .some(nil))
        guard case .transportFailure(.serverUntrusted(.unknownIssuer, _)) = await untrusted.login(device: "d").outcome else {
            Issue.record("a server outside the trust store must be refused")
            return
        }
        let wrongPin = try client(sim, pin: pki.otherPin)
        guard case .transportFailure(.serverUntrusted(.pinMismatch, _)) = await wrongPin.login(device: "d").outcome else {
            Issue.record("a pin mismatch is its own trust problem")
            return
        }
        let rightPin = try client(sim, pin: pki.serverPin)
        _ = try grant(await rightPin.login(device: "d"))
    }

    @Test func theServerRefusesMissingAndForeignClientCertificates() async throws {
        let sim = try CCSimProcess()
        let stranger = try client(sim, certificate: pki.strangerCertificate, key: pki.strangerKey)
        guard case .credentialsRefused(.certificateRejected, let message) = await stranger.login(device: "d").outcome else {
            Issue.record("a certificate from another CA must be rejected")
            return
        }
        #expect(message?.contains("not issued by the campus CA") == true)
        let anonymous = try CCClient(
            configuration: ServerConfiguration(url: sim.url, caFile: pki.caCertificate), client: Self.info, loop: TestLoop.shared)
        guard case .credentialsRefused(.certificateRejected, _) = await anonymous.login(device: "d").outcome else {
            Issue.record("a login without certificate must be rejected")
            return
        }
    }

    @Test func plainHTTPOnlyToLoopbackAndNoProxyEver() async throws {
        for url in ["http://cc.campus.example/", "http://10.0.0.1/", "ftp://127.0.0.1/", "not a url", "https://x/?q=1"] {
            #expect(throws: ClientConfigurationError.self, "\(url)") {
                _ = try CCClient(configuration: ServerConfiguration(url: url), client: Self.info, loop: TestLoop.shared)
            }
        }
        let sim = try CCSimProcess(tls: false, ["--user", "20231234:secret"])
        setenv("http_proxy", "http://127.0.0.1:9", 1)
        setenv("all_proxy", "http://127.0.0.1:9", 1)
        defer { unsetenv("http_proxy"); unsetenv("all_proxy") }
        let cc = try CCClient(configuration: ServerConfiguration(url: sim.url.replacingOccurrences(of: "127.0.0.1", with: "localhost")), client: Self.info, loop: TestLoop.shared)
        _ = try grant(await cc.login(device: "d", user: "20231234", password: "secret"))
        #expect(await cc.login(device: "d", user: "20231234", password: "wrong").outcome
                == .credentialsRefused(.badCredentials, message: "用户名或密码错误"))
    }
}
