import Foundation
import SrunCodec
import TestSupport
import Testing

/// The accounts every Srun test simulator knows.
let account = "2024000001"
let password = "s3cret pw!"
let otherAccount = "2024000002"

/// `ccsim --protocol srun` with the test accounts, plain HTTP.
func srunSim(_ arguments: [String] = []) throws -> CCSimProcess {
    try CCSimProcess(
        tls: false, ["--protocol", "srun", "--user", "\(account):\(password)", "--user", "\(otherAccount):other pw"] + arguments)
}

/// The routes of §9.1: the portal's pages, and the captive redirect for any other host.
@Suite struct SrunPortalRouteTests {
    @Test func portalRootRedirectsToThePortalPageWhichCarriesAcIDAndTheClientAddress() throws {
        let sim = try srunSim(["--ac-id", "7"])
        let client = PortalClient(sim: sim, source: "127.0.0.2")
        let root = try client.get("/")
        #expect(root.status == 302)
        #expect(root.headers["location"] == "/srun_portal_pc?ac_id=7&theme=pro")
        let page = try client.get("/srun_portal_pc", [("ac_id", "7"), ("theme", "pro")])
        #expect(page.status == 200)
        // What BitSrunLoginGo (detect.go:273, :322) and GoAuthing (requests.go:135) scrape.
        #expect(firstMatch(#""ac_id".*?value="(.+)""#, in: page.body) == "7")
        #expect(firstMatch(#"ip\s*:\s*"(.+)""#, in: page.body) == "127.0.0.2")
    }

    @Test func otherHostsAreRedirectedWhileOfflineAndServedOnceOnlineAlsoAsAProxy() throws {
        let sim = try srunSim(["--ac-id", "7"])
        let client = PortalClient(sim: sim, source: "127.0.0.1")
        // As a proxy (absolute-form target): the redirect names the portal host, to be asked through the proxy again.
        let proxied = try client.get("/", proxiedHost: "www.bit.edu.cn")
        #expect(proxied.status == 302)
        #expect(proxied.headers["location"] == "http://10.0.0.55/srun_portal_pc?ac_id=7&theme=pro")
        // Asked directly with another Host: the redirect names this listener.
        let direct = try client.get("/some/page", extra: ["-H", "Host: www.bit.edu.cn"])
        #expect(direct.headers["location"] == sim.url + "srun_portal_pc?ac_id=7&theme=pro")
        // The portal itself through the proxy: its root and its CGI.
        #expect(try client.get("/", proxiedHost: "10.0.0.55").headers["location"] == "/srun_portal_pc?ac_id=7&theme=pro")
        let status = try client.get("/cgi-bin/rad_user_info", [("callback", "cb")], proxiedHost: "10.0.0.55").jsonp("cb")
        #expect(status["error"] as? String == "not_online_error")

        #expect(try client.login(account, password, acID: "7")["error"] as? String == "ok")
        let online = try client.get("/", proxiedHost: "www.bit.edu.cn")
        #expect(online.status == 200)
        // Another address is still offline.
        #expect(try PortalClient(sim: sim, source: "127.0.0.2").get("/", proxiedHost: "www.bit.edu.cn").status == 302)
    }

    @Test func portalHostNamesThePortalAndEverythingElseIsOutside() throws {
        let sim = try srunSim(["--portal-host", "portal.test"])
        let client = PortalClient(sim: sim)
        #expect(try client.get("/", proxiedHost: "portal.test").headers["location"] == "/srun_portal_pc?ac_id=1&theme=pro")
        #expect(try client.get("/", proxiedHost: "10.0.0.55").headers["location"] == "http://portal.test/srun_portal_pc?ac_id=1&theme=pro")
    }

    @Test func captchaEndpointIs404UntilSwitchedOnAndThenLoginsAreRefused() throws {
        let sim = try srunSim()
        let client = PortalClient(sim: sim)
        let path = "/v2/srun_portal_captcha_image_info"
        #expect(try client.get(path, [("user_name", account), ("ip", "")]).status == 404)
        try sim.control("POST", "captcha", ["on": true])
        let on = try client.get(path, [("user_name", account), ("ip", "")])
        #expect(on.status == 200 && on.body == #"{"code":0,"data":"1"}"#)
        let refused = try client.login(account, password)
        #expect(refused["error"] as? String == "captcha_error" && refused["res"] as? String == "captcha_error")
        #expect(refused["error_msg"] as? String == "Captcha is required: log in from a browser.")
        try sim.control("POST", "captcha", ["on": false])
        #expect(try client.get(path).status == 404)
        #expect(try client.login(account, password)["suc_msg"] as? String == "login_ok")
    }

    @Test func httpsPortalWithTheTestCA() throws {
        let sim = try CCSimProcess(tls: true, clientCertificates: false, ["--protocol", "srun", "--user", "\(account):\(password)"])
        #expect(sim.url.hasPrefix("https://127.0.0.1:"))
        let client = PortalClient(sim: sim)
        let answer = try client.get("/cgi-bin/get_challenge", [("callback", "cb"), ("username", account)],
                                    extra: ["--cacert", TestPKI.shared.caCertificate])
        #expect(try answer.jsonp("cb")["res"] as? String == "ok")
    }
}

/// How answers are written (§9.2): exact JSONP, plain JSON, the legacy text.
@Suite struct SrunAnswerShapeTests {
    static let alwaysThere = ["client_ip", "online_ip", "error", "error_msg", "res", "srun_ver", "st"]

    @Test func jsonpIsTheCallbackAndCompactJSONAndNothingElse() throws {
        let sim = try srunSim()
        let client = PortalClient(sim: sim, source: "127.0.0.3")
        for callback in ["jsonp", "jQuery112404013496966464385_1700000000000", "sdu"] {
            let answer = try client.get("/cgi-bin/get_challenge", [("callback", callback), ("username", account), ("ip", "")])
            #expect(answer.body.hasPrefix(callback + "({") && answer.body.hasSuffix("})"))
            #expect(!answer.body.contains("\n") && !answer.body.contains("\": ") && !answer.body.contains(", \""))
            let fields = try answer.jsonp(callback)
            for name in Self.alwaysThere + ["challenge", "expire", "ecode"] { #expect(fields[name] != nil, "\(name)") }
            #expect(fields["client_ip"] as? String == "127.0.0.3" && fields["online_ip"] as? String == "127.0.0.3")
            #expect(fields["ecode"] as? Int == 0 && !(fields["ecode"] is String))
            #expect(fields["st"] is NSNumber && !(fields["st"] is String))
        }
        // A refusal: ecode is a string.
        let refused = try client.login(otherAccount, "wrong")
        #expect(refused["ecode"] as? String == "E2553")
        for name in Self.alwaysThere { #expect(refused[name] != nil, "\(name)") }
    }

    @Test func withoutCallbackPlainJSONAndTheLegacyStatusText() throws {
        let sim = try srunSim()
        let client = PortalClient(sim: sim, source: "127.0.0.4")
        let challenge = try client.get("/cgi-bin/get_challenge", [("username", account)])
        #expect(try challenge.json()["res"] as? String == "ok")
        #expect(try client.get("/cgi-bin/rad_user_info").body == "not_online_error")
        #expect(try client.login(account, password)["error"] as? String == "ok")
        let legacy = try client.get("/cgi-bin/rad_user_info").body.split(separator: ",", omittingEmptySubsequences: false)
        try #require(legacy.count > 8, "\(legacy)")
        #expect(legacy[0] == Substring(account) && legacy[8] == "127.0.0.4")
        #expect(Int(legacy[6]) != nil && Int(legacy[7]) != nil)
    }
}

/// get_challenge (§9.3).
@Suite struct SrunChallengeTests {
    @Test func oneTokenPerAddressAndUsernameRepeatedWithTheSecondsLeft() throws {
        let sim = try srunSim()
        let client = PortalClient(sim: sim, source: "127.0.0.2")
        let first = try client.challenge(account)
        let token = try #require(first["challenge"] as? String)
        #expect(token.count == 64 && token.allSatisfy { $0.isHexDigit && !$0.isUppercase })
        #expect(first["expire"] as? String == "60")
        Thread.sleep(forTimeInterval: 1.5)
        let again = try client.challenge(account)
        #expect(again["challenge"] as? String == token)
        let left = try #require((again["expire"] as? String).flatMap { Int($0) })
        #expect(left < 60 && left >= 55)
        #expect(try client.challenge(otherAccount)["challenge"] as? String != token)
        #expect(try PortalClient(sim: sim, source: "127.0.0.3").challenge(account)["challenge"] as? String != token)
    }
}

func firstMatch(_ pattern: String, in text: String) -> String? {
    guard let expression = try? NSRegularExpression(pattern: pattern),
        let match = expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)), match.numberOfRanges > 1,
        let range = Range(match.range(at: 1), in: text)
    else { return nil }
    return String(text[range])
}
