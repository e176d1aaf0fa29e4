import CCRelayCore
import CurlTransport
import EventLoop
import Foundation
import SrunCodec
@testable import SrunProtocol
import TestSupport
import Testing

/// The Srun client over libcurl against a scripted loopback portal
/// (Tests/Fixtures/srun_portal.py): what it sends, that it keeps one
/// connection, its one retry after an expired challenge, its time limits,
/// its transport rules, and hostile answers on the wire.
@Suite struct SrunClientTests {
    static let token = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
    static var challenge: [String: Any] { [
        "json": ["challenge": token, "client_ip": "127.0.0.1", "ecode": 0, "error": "ok", "error_msg": "", "expire": "60",
                 "online_ip": "127.0.0.1", "res": "ok", "srun_ver": "SRunCGIAuthIntfSvr V1.18 B20231026", "st": 1_759_064_806],
    ] }
    static var loginOK: [String: Any] { [
        "json": ["ecode": 0, "error": "ok", "error_msg": "", "online_ip": "127.0.0.1", "client_ip": "127.0.0.1", "res": "ok",
                 "ploy_msg": "E0000: Login is successful.", "suc_msg": "login_ok", "access_token": "abc"],
    ] }
    static var online: [String: Any] { [
        "json": ["error": "ok", "res": "ok", "user_name": "2024000001", "online_ip": "10.1.2.3", "online_device_total": "1",
                 "sum_bytes": 1024, "sum_seconds": "60", "user_balance": "5.00"],
    ] }
    static var expired: [String: Any] { ["json": ["error": "challenge_expire_error", "res": "challenge_expire_error", "ecode": ""]] }

    func client(_ portal: SrunPortalFixture, _ change: (inout SrunConfiguration) -> Void = { _ in }) throws -> SrunClient {
        var configuration = SrunConfiguration(portal: portal.url, acID: "7", domain: "@cmcc")
        change(&configuration)
        return try SrunClient(configuration: configuration, userAgent: "ccrelay-test", loop: TestLoop.shared)
    }

    /// `times` rad_user_info asked at once (queued behind each other), their outcomes in the order they came.
    func userInfo(_ client: SrunClient, times: Int) async throws -> [SrunOutcome<SrunUserInfo>] {
        try await onLoop { done in
            var seen: [SrunOutcome<SrunUserInfo>] = []
            for _ in 0..<times {
                client.userInfo { exchange in
                    seen.append(exchange.outcome)
                    if seen.count == times { done(seen) }
                }
            }
        }
    }

    func login(_ client: SrunClient, password: String = "s3cret pw!") async throws -> SrunExchange<SrunLoginAnswer> {
        try await onLoop { try client.login(user: "2024000001", password: password, completion: $0) }
    }

    @Test func aLoginSendsThePortalsParametersAndKeepsOneConnection() async throws {
        // With the token, the portal checks chksum: a wrong one is answered sign_error.
        let portal = try SrunPortalFixture(
            ["/cgi-bin/get_challenge": [Self.challenge], "/cgi-bin/srun_portal": [Self.loginOK], "/cgi-bin/rad_user_info": [Self.online]],
            token: Self.token)
        let srun = try client(portal)
        let login = try await login(srun)
        #expect(login.outcome == .answered(.loggedIn(SrunLoginGrant(onlineIP: "127.0.0.1"))), "\(login.outcome)")
        #expect(login.requests == 2 && login.connectionsOpened == 1 && login.httpStatus == 200)
        let info = try await onLoop { srun.userInfo(completion: $0) }
        #expect(info.connectionsOpened == 0, "rad_user_info went over the kept connection")
        guard case .answered(.online(let account)) = info.outcome else { Issue.record("\(info.outcome)"); return }
        #expect(account.userName == "2024000001" && account.sumBytes == 1024 && account.sumSeconds == 60 && account.userBalance == 5)

        let requests = portal.requests()
        #expect(requests.map { $0["path"] as? String } == ["/cgi-bin/get_challenge", "/cgi-bin/srun_portal", "/cgi-bin/rad_user_info"])
        #expect(Set(requests.compactMap { $0["port"] as? Int }).count == 1, "one connection, seen from the portal")
        let challenge = try #require(portal.queries("/cgi-bin/get_challenge").first)
        #expect(challenge["username"] == "2024000001@cmcc" && challenge["ip"] == "")
        let query = try #require(portal.queries("/cgi-bin/srun_portal").first)
        #expect(query["action"] == "login" && query["username"] == "2024000001@cmcc" && query["ac_id"] == "7")
        #expect(query["ip"] == "127.0.0.1", "the challenge's client_ip")
        #expect(query["n"] == "200" && query["type"] == "1" && query["os"] == "Linux" && query["name"] == "Linux" && query["double_stack"] == "0")
        let hmd5 = SrunDigest.hmacMD5Hex(key: Array(Self.token.utf8), message: Array("s3cret pw!".utf8))
        #expect(query["password"] == "{MD5}" + hmd5)
        let info64 = try #require(query["info"].flatMap { $0.hasPrefix("{SRBX1}") ? SrunBase64.decode(String($0.dropFirst(7))) : nil })
        let json = try #require(XEncode.decode(info64, key: Array(Self.token.utf8)))
        #expect(String(decoding: json, as: UTF8.self)
                == #"{"username":"2024000001@cmcc","password":"s3cret pw!","ip":"127.0.0.1","acid":"7","enc_ver":"srun_bx1"}"#)
        let raw = try #require(requests[1]["raw"] as? String)
        #expect(raw.hasPrefix("callback=jQuery") && raw.contains("&_=") && !raw.contains("s3cret"), "\(raw.prefix(40))")
        #expect(query["callback"]?.hasSuffix("_" + (query["_"] ?? "-")) == true)
        let headers = requests[0]["headers"] as? [String: String] ?? [:]
        #expect(headers["User-Agent"] == "ccrelay-test")
    }

    @Test(arguments: SrunSettings.Digest.allCases)
    func eachDigestFormLogsInToAPortalThatChecksChksum(_ digest: SrunSettings.Digest) async throws {
        let portal = try SrunPortalFixture(["/cgi-bin/get_challenge": [Self.challenge], "/cgi-bin/srun_portal": [Self.loginOK]], token: Self.token)
        let login = try await login(try client(portal) { $0.passwordDigest = digest; $0.ip = "10.9.8.7"; $0.doubleStack = true })
        #expect(login.outcome == .answered(.loggedIn(SrunLoginGrant(onlineIP: "127.0.0.1"))), "\(login.outcome)")
        #expect(portal.queries("/cgi-bin/get_challenge").first?["double_stack"] == "1")
        let query = try #require(portal.queries("/cgi-bin/srun_portal").first)
        #expect(query["ip"] == "10.9.8.7" && query["double_stack"] == "1")
    }

    @Test func anExpiredChallengeIsFetchedAgainOnceOnly() async throws {
        let retried = try SrunPortalFixture(["/cgi-bin/get_challenge": [Self.challenge], "/cgi-bin/srun_portal": [Self.expired, Self.loginOK]])
        let first = try await login(try client(retried))
        #expect(first.outcome == .answered(.loggedIn(SrunLoginGrant(onlineIP: "127.0.0.1"))) && first.requests == 4, "\(first.outcome)")
        #expect(retried.queries("/cgi-bin/get_challenge").count == 2)

        let stuck = try SrunPortalFixture(["/cgi-bin/get_challenge": [Self.challenge], "/cgi-bin/srun_portal": [Self.expired]])
        let again = try await login(try client(stuck))
        #expect(again.outcome == .answered(.refused(.challengeExpired, words: "challenge_expire_error")) && again.requests == 4)
        #expect(stuck.queries("/cgi-bin/srun_portal").count == 2)
    }

    @Test func aRefusedChallengeEndsTheLogin() async throws {
        let portal = try SrunPortalFixture([
            "/cgi-bin/get_challenge": [["json": ["error": "login_error", "ecode": "E2531", "error_msg": "E2531: User not found."]]],
        ])
        let login = try await login(try client(portal))
        #expect(login.outcome == .answered(.refused(.badCredentials, words: "E2531: User not found.")) && login.requests == 1)
    }

    @Test func aNonASCIIPasswordIsRefusedBeforeAnythingIsSent() async throws {
        let portal = try SrunPortalFixture(["/cgi-bin/get_challenge": [Self.challenge], "/cgi-bin/srun_portal": [Self.loginOK]])
        let srun = try client(portal)
        await #expect(throws: SrunRequestError.passwordNotASCII) { try await login(srun, password: "密码pass") }
        #expect(portal.requests().isEmpty)
    }

    @Test(.timeLimit(.minutes(1)))
    func aChallengeThatTakes16SecondsStillLogsInWithTheDefaults() async throws {
        var slow = Self.challenge
        slow["delay"] = 16
        let portal = try SrunPortalFixture(["/cgi-bin/get_challenge": [slow], "/cgi-bin/srun_portal": [Self.loginOK]])
        let srun = try client(portal)
        #expect(srun.configuration.requestTimeout > .seconds(16) && srun.configuration.operationTimeout > .seconds(32),
                "two 16 s steps fit the defaults")
        let login = try await login(srun)
        #expect(login.outcome == .answered(.loggedIn(SrunLoginGrant(onlineIP: "127.0.0.1"))), "\(login.outcome)")
    }

    @Test func eachRequestAndTheWholeOperationAreBounded() async throws {
        var slow = Self.challenge
        slow["delay"] = 40
        let portal = try SrunPortalFixture(["/cgi-bin/get_challenge": [slow]])
        let started = ContinuousClock.now
        let login = try await login(try client(portal) { $0.requestTimeout = .seconds(1) })
        // The 1 s bound, not the challenge's 40 s (with room for a loaded 2-core machine: a local CI
        // run beside the real desktops' tests took over 25 s).
        #expect(login.outcome == .failed(.timeout) && ContinuousClock.now - started < .seconds(38), "\(login.outcome)")

        var answer = Self.loginOK
        answer["delay"] = 6
        let twoSteps = try SrunPortalFixture(["/cgi-bin/get_challenge": [Self.challenge], "/cgi-bin/srun_portal": [answer]])
        let srun = try client(twoSteps) { $0.requestTimeout = .seconds(10) }
        let bounded = try await onLoop { try srun.login(user: "2024000001", password: "pw", timeout: .seconds(4), completion: $0) }
        #expect(bounded.outcome == .failed(.timeout) && bounded.requests == 2, "the login step got what was left of 4 s: \(bounded.outcome)")
        let roomy = try await onLoop { try srun.login(user: "2024000001", password: "pw", timeout: .seconds(15), completion: $0) }
        #expect(roomy.outcome == .answered(.loggedIn(SrunLoginGrant(onlineIP: "127.0.0.1"))), "\(roomy.outcome)")
    }

    @Test func userInfoOfflineAndThenAPortalLogout() async throws {
        let portal = try SrunPortalFixture([
            "/cgi-bin/rad_user_info": [["json": ["error": "not_online_error", "res": "not_online_error", "client_ip": "10.5.6.7", "online_ip": "10.5.6.7"]]],
            "/cgi-bin/srun_portal": [["json": ["error": "login_error", "error_msg": "You are not online.", "res": "login_error"]]],
        ])
        let srun = try client(portal)
        let info = try await onLoop { srun.userInfo(completion: $0) }
        #expect(info.outcome == .answered(.offline(clientIP: "10.5.6.7")))
        let logout = try await onLoop { try srun.logout(.portal, user: "2024000001", completion: $0) }
        #expect(logout.outcome == .answered(.notOnline))
        let query = try #require(portal.queries("/cgi-bin/srun_portal").first)
        #expect(query["action"] == "logout" && query["username"] == "2024000001@cmcc" && query["ac_id"] == "7" && query["ip"] == "10.5.6.7")
        #expect(query["password"] == nil && query["info"] == nil, "a logout carries no password")
    }

    @Test func aDMLogoutAsksForTheAddressThenSignsIt() async throws {
        let portal = try SrunPortalFixture([
            "/cgi-bin/rad_user_info": [Self.online], "/cgi-bin/rad_user_dm": [["json": ["error": "logout_ok", "res": "ok"]]],
        ])
        let srun = try client(portal)
        let before = Date().timeIntervalSince1970
        let logout = try await onLoop { try srun.logout(.dm, user: "2024000001", completion: $0) }
        let after = Date().timeIntervalSince1970
        #expect(logout.outcome == .answered(.loggedOut) && logout.requests == 2)
        let query = try #require(portal.queries("/cgi-bin/rad_user_dm").first)
        let time = query["time"] ?? ""
        #expect(query["username"] == "2024000001" && query["ip"] == "10.1.2.3" && query["unbind"] == "1")
        #expect(query["sign"] == SrunDigest.sha1Hex(Array((time + "2024000001" + "10.1.2.3" + "1" + time).utf8)))
        // The time of the request, whole seconds: between the call and its answer however long a loaded machine took.
        #expect((before.rounded(.down)...after.rounded(.up)).contains(Double(time) ?? 0), "time \(time), called at \(before), answered at \(after)")
    }

    @Test func theCaptchaCheckAndAPortalWithoutOne() async throws {
        let portal = try SrunPortalFixture(["/v2/srun_portal_captcha_image_info": [["json": ["code": 0, "data": "1"]]]])
        let srun = try client(portal)
        #expect(try await onLoop { try srun.captchaRequired(user: "2024000001", completion: $0) }.outcome == .answered(true))
        #expect(portal.queries("/v2/srun_portal_captcha_image_info").first?["user_name"] == "2024000001@cmcc")
        let without = try SrunPortalFixture([:])
        let none = try client(without)
        #expect(try await onLoop { try none.captchaRequired(user: "2024000001", completion: $0) }.outcome == .answered(false))
        withExtendedLifetime((none, without)) {}
    }

    @Test func discoveryFollowsARedirectToThePortalPage() async throws {
        let page = #"<html><script>var CONFIG = { ip : "10.1.2.3" };</script><script src="/js/jquery.srun.portal.js"></script></html>"#
        let portal = try SrunPortalFixture([
            "/": [["status": 302, "headers": ["Location": "/srun_portal_pc?ac_id=9&theme=pro"]]], "/srun_portal_pc": [["raw": page]],
        ])
        let srun = try client(portal)
        let found = try await onLoop { try srun.discover(from: portal.url, completion: $0) }
        #expect(found.outcome == .answered(PortalDiscovery(
            family: .srun, portal: portal.url, acID: "9", clientIP: "10.1.2.3", trail: [portal.url, portal.url + "srun_portal_pc?ac_id=9&theme=pro"])),
            "\(found.outcome)")
        #expect(found.requests == 2)
        #expect(throws: SrunRequestError.discoveryURLUnusable) { try srun.discover(from: "file:///etc/passwd") { _ in } }
    }

    @Test func anAPICallFollowsNoRedirect() async throws {
        let portal = try SrunPortalFixture([
            "/cgi-bin/rad_user_info": [["status": 302, "headers": ["Location": "/elsewhere"]]], "/elsewhere": [Self.online],
        ])
        let srun = try client(portal)
        let info = try await onLoop { srun.userInfo(completion: $0) }
        #expect(info.outcome == .failed(.protocolError("the portal answered HTTP 302")) && info.httpStatus == 302)
        #expect(portal.queries("/elsewhere").isEmpty)
    }

    @Test func hostileAnswersOnTheWire() async throws {
        let portal = try SrunPortalFixture([
            "/cgi-bin/rad_user_info": [
                ["raw": "x", "times": 70_000], ["status": 500, "raw": "oops"], ["json": ["error": "ok"], "callback": "evil"], Self.online,
            ],
        ])
        let outcomes = try await userInfo(try client(portal), times: 4)
        #expect(outcomes[0] == .failed(.replyTooLarge))
        #expect(outcomes[1] == .failed(.protocolError("the portal answered HTTP 500")))
        #expect(outcomes[2] == .failed(.protocolError("the answer calls another callback than the one sent")))
        guard case .answered(.online) = outcomes[3] else { Issue.record("after the failures: \(outcomes[3])"); return }
    }

    @Test func aClosedPortIsALostConnectionAndWhatWaitsBehindItStillRuns() async throws {
        let closed = try SrunClient(configuration: SrunConfiguration(portal: "http://127.0.0.1:1/", acID: "1"), userAgent: "t", loop: TestLoop.shared)
        let outcomes = try await userInfo(closed, times: 2)
        for outcome in outcomes {
            guard case .failed(.connectionLost) = outcome else { Issue.record("\(outcome)"); return }
        }
    }

    @Test(.enabled(if: SrunPortalFixture.nonLoopbackAddress != nil, "this computer has an IPv4 address besides loopback"))
    func plainHTTPGoesToAnyAddressUnlikeCCs() async throws {
        let portal = try SrunPortalFixture(["/cgi-bin/rad_user_info": [Self.online]], address: try #require(SrunPortalFixture.nonLoopbackAddress))
        let srun = try client(portal)
        guard case .answered(.online) = try await onLoop({ srun.userInfo(completion: $0) }).outcome else {
            Issue.record("\(portal.url) was not reached"); return
        }
    }

    @Test func dropConnectionOpensAFreshOne() async throws {
        let portal = try SrunPortalFixture(["/cgi-bin/rad_user_info": [Self.online]])
        let srun = try client(portal)
        #expect(try await onLoop { srun.userInfo(completion: $0) }.connectionsOpened == 1)
        #expect(try await onLoop { srun.userInfo(completion: $0) }.connectionsOpened == 0)
        try await onLoop { done in srun.dropConnection { done(()) } }
        #expect(try await onLoop { srun.userInfo(completion: $0) }.connectionsOpened == 1)
        #expect(Set(portal.requests().compactMap { $0["port"] as? Int }).count == 2)
    }

    @Test func httpsIsVerifiedLikeTheCCClients() async throws {
        let portal = try SrunPortalFixture(["/cgi-bin/rad_user_info": [Self.online]], tls: true)
        let url = "https://127.0.0.1:\(portal.port)/"
        func info(_ change: @escaping (inout SrunConfiguration) -> Void) async throws -> SrunOutcome<SrunUserInfo> {
            var configuration = SrunConfiguration(portal: url, acID: "1")
            change(&configuration)
            let srun = try SrunClient(configuration: configuration, userAgent: "t", loop: TestLoop.shared)
            return try await onLoop { srun.userInfo(completion: $0) }.outcome
        }
        guard case .answered(.online) = try await info({ $0.caFile = TestPKI.shared.caCertificate }) else { Issue.record("not trusted"); return }
        guard case .failed(.serverUntrusted(.unknownIssuer, _)) = try await info({ _ in }) else { Issue.record("trusted without the CA"); return }
        guard case .failed(.serverUntrusted(.pinMismatch, _)) = try await info({
            $0.caFile = TestPKI.shared.caCertificate
            $0.pinnedKey = TestPKI.shared.otherPin
        }) else { Issue.record("the pin was not checked"); return }
    }

    @Test(arguments: [
        ("ftp://10.0.0.55/", "server.url"), ("http://u:p@10.0.0.55/", "server.url"), ("http://10.0.0.55/?a=1", "server.url"),
    ])
    func aConfigurationIsCheckedKeyByKey(_ portal: String, _ key: String) {
        #expect(throws: ClientConfigurationError.self) { try SrunClient.check(SrunConfiguration(portal: portal, acID: "1"), localize: .english) }
        #expect((try? SrunClient.check(SrunConfiguration(portal: portal, acID: "1"), localize: .english)) == nil)
        do { try SrunClient.check(SrunConfiguration(portal: portal, acID: "1"), localize: .english) } catch { #expect(error.key == key) }
    }

    @Test func everySettingIsChecked() {
        func key(_ configuration: SrunConfiguration) -> String? {
            do { try SrunClient.check(configuration, localize: .english) } catch { return error.key }
            return nil
        }
        let good = SrunConfiguration(portal: "http://10.0.0.55", acID: "1")
        #expect(key(good) == nil)
        for (change, expected) in [
            ({ (c: inout SrunConfiguration) in c.acID = "1a" }, "srun.ac-id"), ({ $0.acID = "" }, "srun.ac-id"),
            ({ $0.domain = "@c mcc" }, "srun.domain"), ({ $0.ip = "10.0.0.256" }, "srun.ip"), ({ $0.os = "" }, "srun.os"),
            ({ $0.platform = "Linux\n" }, "srun.platform"), ({ $0.interface = "ccrelay-none0" }, "server.interface"),
        ] as [((inout SrunConfiguration) -> Void, String)] {
            var configuration = good
            change(&configuration)
            #expect(key(configuration) == expected)
        }
    }
}
