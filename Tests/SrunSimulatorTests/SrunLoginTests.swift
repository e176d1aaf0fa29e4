import Foundation
import SrunCodec
import TestSupport
import Testing

/// action=login, rule by rule in §9.4's order.
@Suite struct SrunLoginTests {
    @Test func grantedWithTheFieldSetOfARealPortal() throws {
        let sim = try srunSim()
        let client = PortalClient(sim: sim, source: "127.0.0.2")
        let granted = try client.login(account, password)
        for name in ["ServerFlag", "ServicesIntfServerIP", "ServicesIntfServerPort", "checkout_date", "ploy_msg", "real_name",
                     "remain_flux", "remain_times", "sysver", "srun_ver", "st"] {
            #expect(granted[name] != nil, "\(name)")
        }
        #expect(granted["error"] as? String == "ok" && granted["res"] as? String == "ok" && granted["error_msg"] as? String == "")
        #expect(granted["suc_msg"] as? String == "login_ok" && granted["ecode"] as? Int == 0)
        #expect(granted["client_ip"] as? String == "127.0.0.2" && granted["online_ip"] as? String == "127.0.0.2")
        #expect((granted["access_token"] as? String)?.isEmpty == false)
        let sessions = try sim.sessions()
        #expect(sessions.count == 1 && sessions.first?["account"] as? String == account && sessions.first?["ip"] as? String == "127.0.0.2")
        #expect(sessions.first?["device_class"] as? String == "Linux" && sessions.first?["kind"] as? String == "login")
    }

    @Test func eachRequiredParameterMissingIsRefusedFirst() throws {
        let sim = try srunSim()
        let client = PortalClient(sim: sim)
        for name in ["username", "password", "ac_id", "chksum", "info", "n", "type"] {
            let answer = try client.login(account, password) { $0.leaveOut = [name] }
            #expect(answer["error"] as? String == "missing_required_parameters_error", "without \(name)")
        }
        #expect(try sim.sessions().isEmpty)
        // ip may be empty (BitSrunLoginGo's double-stack mode); it enters the chksum as "".
        #expect(try client.login(account, password) { $0.ip = "" }["suc_msg"] as? String == "login_ok")
    }

    @Test func aLoginWithoutALiveChallengeOfThisAddressAndUserIsChallengeExpire() throws {
        let sim = try srunSim()
        let here = PortalClient(sim: sim, source: "127.0.0.2")
        var form = SrunLoginForm(token: unissuedToken, username: account, password: password, ip: "127.0.0.2", acID: "1")
        #expect(try here.cgi("/cgi-bin/srun_portal", form.query)["error"] as? String == "challenge_expire_error")
        // A token another address asked for is not this address's.
        form.token = try #require(PortalClient(sim: sim, source: "127.0.0.3").challenge(account)["challenge"] as? String)
        #expect(try here.cgi("/cgi-bin/srun_portal", form.query)["error"] as? String == "challenge_expire_error")
        // A granted login uses its challenge up.
        form.token = try #require(here.challenge(account)["challenge"] as? String)
        #expect(try here.cgi("/cgi-bin/srun_portal", form.query)["suc_msg"] as? String == "login_ok")
        #expect(try here.logout(account)["error"] as? String == "ok")
        Thread.sleep(forTimeInterval: 3.2)
        #expect(try here.cgi("/cgi-bin/srun_portal", form.query)["error"] as? String == "challenge_expire_error")
    }

    @Test func chksumIsVerifiedAfterTrimmingTrailingWhiteSpace() throws {
        let sim = try srunSim()
        let client = PortalClient(sim: sim, source: "127.0.0.2")
        let wrong = try client.login(account, password) { $0.chksum = String(repeating: "0", count: 40) }
        #expect(wrong["error"] as? String == "sign_error" && wrong["res"] as? String == "sign_error")
        #expect(wrong["ecode"] as? String == "")
        // BitSrunLoginGo's chksum ends in a newline (%0A).
        #expect(try client.login(account, password) { $0.chksumSuffix = "\n" }["suc_msg"] as? String == "login_ok")
        #expect(try PortalClient(sim: sim, source: "127.0.0.3").login(otherAccount, "other pw") { $0.chksumSuffix = " \t\n" }["suc_msg"]
            as? String == "login_ok")
    }

    @Test func infoIsDecodedWithAnyKeyOrderAndAcidStringOrNumber() throws {
        let sim = try srunSim()
        let client = PortalClient(sim: sim, source: "127.0.0.2")
        func refusal(_ change: (inout SrunLoginForm) -> Void) throws -> String? {
            let answer = try client.login(account, password, change: change)
            #expect(answer["error"] as? String == "login_error" && answer["ecode"] as? String == "")
            return answer["error_msg"] as? String
        }
        #expect(try refusal { $0.info = "SRBX1" + $0.computedInfo.dropFirst(7) } == "INFO Error,err_code=1")
        #expect(try refusal { $0.info = "{SRBX1}not*base64" } == "INFO Error,err_code=1")
        #expect(try refusal { form in
            form.info = "{SRBX1}" + SrunBase64.encode(XEncode.encode(Array(form.infoJSON.utf8), key: Array(String(repeating: "f", count: 64).utf8)))
        }?.hasPrefix("INFO Error,err_code=") == true)
        #expect(try refusal { form in
            form.info = "{SRBX1}" + SrunBase64.encode(XEncode.encode(Array("[1,2,3]".utf8), key: Array(form.token.utf8)))
        } == "INFO Error,err_code=3")
        #expect(try refusal { $0.infoUsername = otherAccount } == "INFO Error,err_code=4")
        // zu1k sends "acid":1 as a number.
        #expect(try client.login(account, password) { $0.acidAsNumber = true }["suc_msg"] as? String == "login_ok")
    }

    @Test func aWrongAcIDIsBASRespondTimeoutBeforeTheUserIsLookedUp() throws {
        let sim = try srunSim(["--ac-id", "5"])
        let client = PortalClient(sim: sim)
        for who in [account, "nobody"] {
            let answer = try client.login(who, password, acID: "4")
            #expect(answer["error"] as? String == "login_error" && answer["error_msg"] as? String == "INFO failed, BAS respond timeout.")
        }
        #expect(try client.login(account, password, acID: "5")["suc_msg"] as? String == "login_ok")
    }

    @Test func unknownUserThenIntervalThenPassword() throws {
        let sim = try srunSim()
        let client = PortalClient(sim: sim, source: "127.0.0.2")
        let unknown = try client.login("2099999999", password)
        #expect(unknown["ecode"] as? String == "E2531" && unknown["error_msg"] as? String == "E2531: User not found.")
        #expect(unknown["error"] as? String == "login_error" && unknown["res"] as? String == "login_error")
        let wrong = try client.login(account, "not it")
        #expect(wrong["ecode"] as? String == "E2553" && wrong["error_msg"] as? String == "E2553: Password is error.")
        // A refused attempt counts towards the 3 s interval; the refusal E2532 itself does not.
        let early = try client.login(account, password)
        #expect(early["ecode"] as? String == "E2532")
        Thread.sleep(forTimeInterval: 3.2)
        #expect(try client.login(account, password)["suc_msg"] as? String == "login_ok")
    }

    @Test func anAddressAlreadyOnlineIsOKWithIPAlreadyOnlineError() throws {
        let sim = try srunSim()
        let client = PortalClient(sim: sim, source: "127.0.0.2")
        let first = try client.login(account, password)
        #expect(first["suc_msg"] as? String == "login_ok")
        let again = try client.login(otherAccount, "other pw")
        #expect(again["error"] as? String == "ok" && again["suc_msg"] as? String == "ip_already_online_error")
        #expect(try sim.sessions().map { $0["account"] as? String } == [account])
    }

    @Test func atTheSessionLimitTheNewcomerGetsE2620() throws {
        let sim = try srunSim(["--session-limit", "1", "--when-full", "reject"])
        try sim.control("POST", "sessions", ["account": account, "ip": "10.8.0.9", "device_class": "Android", "os": "Android"])
        let client = PortalClient(sim: sim, source: "127.0.0.2")
        let full = try client.login(account, password)
        #expect(full["ecode"] as? String == "E2620" && full["error_msg"] as? String == "E2620: You are already online.")
        #expect(try client.login(otherAccount, "other pw")["suc_msg"] as? String == "login_ok")
    }

    @Test func inKickModeTheOldestSessionIsDroppedSilently() throws {
        let sim = try srunSim(["--session-limit", "2", "--when-full", "kick"])
        try sim.control("POST", "sessions", ["account": account, "ip": "10.8.0.9"])
        let early = PortalClient(sim: sim, source: "127.0.0.2")
        #expect(try early.login(account, password)["suc_msg"] as? String == "login_ok")
        Thread.sleep(forTimeInterval: 3.2)
        #expect(try PortalClient(sim: sim, source: "127.0.0.3").login(account, password)["suc_msg"] as? String == "login_ok")
        #expect(try sim.sessions().compactMap { $0["ip"] as? String } == ["127.0.0.2", "127.0.0.3"])
        // A second device kicks the login from 127.0.0.2, which just finds itself offline.
        try sim.control("POST", "sessions", ["account": account, "ip": "10.8.0.10"])
        #expect(try early.status()["error"] as? String == "not_online_error")
    }

    @Test func strictHMD5RefusesTheEmptyMessageHMACThatTheDefaultAccepts() throws {
        let bit: (inout SrunLoginForm) -> Void = { $0.hmd5 = SrunDigest.hmacMD5Hex(key: Array($0.token.utf8), message: []) }
        let strict = try srunSim(["--strict-hmd5"])
        let refused = try PortalClient(sim: strict).login(account, password, change: bit)
        #expect(refused["error"] as? String == "sign_error")
        #expect(try PortalClient(sim: strict, source: "127.0.0.2").login(otherAccount, "other pw")["suc_msg"] as? String == "login_ok")
        #expect(try PortalClient(sim: srunSim()).login(account, password, change: bit)["suc_msg"] as? String == "login_ok")
    }
}

/// A token the simulator never issued.
let unissuedToken = String(repeating: "ab", count: 32)
