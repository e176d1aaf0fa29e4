import Foundation
import TestSupport
import Testing

/// The control API's scripted faults and its read-backs.
@Suite struct SrunFaultTests {
    @Test func sessionsAreListedAndDroppedWithoutAReason() throws {
        let sim = try srunSim()
        let client = PortalClient(sim: sim, source: "127.0.0.2")
        #expect(try client.login(account, password)["suc_msg"] as? String == "login_ok")
        let listed = try #require(try sim.sessions().first)
        #expect(listed["account"] as? String == account && listed["ip"] as? String == "127.0.0.2")
        #expect(listed["since"] is Int && listed["device_class"] as? String == "Linux")
        let dropped = try sim.control("DELETE", "sessions", ["ip": "127.0.0.2"]) as? [String: Any]
        #expect(dropped?["sessions"] as? Int == 1)
        #expect(try client.status()["error"] as? String == "not_online_error")
        #expect(try sim.sessions().isEmpty)
    }

    @Test(arguments: [
        (["ecode": "E2553", "error_msg": "E2553: Password is error."], "login_error", "E2553", "E2553: Password is error."),
        (["error": "no_response_data_error"], "no_response_data_error", "", ""),
        (["error": "challenge_expire_error"], "challenge_expire_error", "", ""),
        (["error": "INFO failed, BAS respond timeout."], "login_error", "", "INFO failed, BAS respond timeout."),
        (["ecode": "E2901", "error_msg": "E2901: (Third party 1)Status_Err"], "login_error", "E2901", "E2901: (Third party 1)Status_Err"),
        (["ecode": "E3001"], "login_error", "E3001", "E3001: Flux or time is used up."),
    ])
    func theNextLoginIsAnsweredAsScripted(body: [String: String], error: String, ecode: String, message: String) throws {
        let sim = try srunSim()
        try sim.control("POST", "next-login", body)
        let client = PortalClient(sim: sim, source: "127.0.0.2")
        let answer = try client.login(account, password)
        #expect(answer["error"] as? String == error && answer["res"] as? String == error)
        #expect(answer["ecode"] as? String == ecode && answer["error_msg"] as? String == message)
        #expect(try sim.sessions().isEmpty)
        // Once only: the scripted answer changed nothing, not even the interval.
        #expect(try client.login(account, password)["suc_msg"] as? String == "login_ok")
    }

    @Test func aSlowChallengeAnswersLateAsOftenAsScripted() throws {
        let sim = try srunSim()
        try sim.control("POST", "slow-challenge", ["seconds": 2, "count": 1])
        let client = PortalClient(sim: sim)
        let clock = ContinuousClock()
        let start = clock.now
        #expect(try client.challenge(account)["expire"] as? String == "60")
        let slow = clock.now - start
        #expect(slow >= .seconds(2))
        _ = try client.challenge(account)
        #expect(clock.now - start - slow < .seconds(2))
    }

    @Test func aMACBoundAddressIsOnlineWithoutALoginAndStaysSo() throws {
        let sim = try srunSim()
        try sim.control("POST", "sessions", ["account": account, "ip": "127.0.0.6", "kind": "mac-bound", "mac": "aa:bb:cc:dd:ee:ff"])
        let client = PortalClient(sim: sim, source: "127.0.0.6")
        let status = try client.status()
        #expect(status["error"] as? String == "ok" && status["user_name"] as? String == account)
        #expect(status["user_mac"] as? String == "aa:bb:cc:dd:ee:ff")
        #expect(try client.login(account, password)["suc_msg"] as? String == "ip_already_online_error")
        #expect(try client.logout(account)["error"] as? String == "ok")
        #expect(try client.status()["error"] as? String == "ok")
    }

    @Test func otherDevicesOfTheAccountShowInTheDeviceCountAndDetail() throws {
        let sim = try srunSim()
        let client = PortalClient(sim: sim, source: "127.0.0.2")
        #expect(try client.login(account, password)["suc_msg"] as? String == "login_ok")
        try sim.control("POST", "sessions", ["account": account, "ip": "10.21.3.4", "device_class": "Mobile", "os": "Android"])
        var status = try client.status()
        #expect(status["online_device_total"] as? String == "2")
        let detail = try #require(status["online_device_detail"] as? String)
        let devices = try #require(try JSONSerialization.jsonObject(with: Data(detail.utf8)) as? [String: [String: Any]])
        #expect(devices.values.contains { $0["ip"] as? String == "10.21.3.4" && $0["os_name"] as? String == "Android" })
        // A new device appears.
        try sim.control("POST", "sessions", ["account": account, "ip": "10.21.3.5"])
        status = try client.status()
        #expect(status["online_device_total"] as? String == "3")
        let conflict = try sim.control("POST", "sessions", ["account": account, "ip": "10.21.3.5"]) as? [String: Any]
        #expect(conflict?["error"] as? String == "conflict")
    }

    @Test func reportedValuesAreSentAsGiven() throws {
        let sim = try srunSim()
        let client = PortalClient(sim: sim, source: "127.0.0.2")
        #expect(try client.login(account, password)["suc_msg"] as? String == "login_ok")
        try sim.control("POST", "account", ["user_balance": 12.5, "sum_bytes": 922_042_368, "sum_seconds": 10800])
        try sim.control("POST", "account", ["account": account, "wallet_balance": "5.00", "remain_bytes": 0])
        let status = try client.status()
        #expect(status["user_balance"] as? Double == 12.5 && status["sum_bytes"] as? Int == 922_042_368)
        #expect(status["sum_seconds"] as? Int == 10800 && status["wallet_balance"] as? String == "5.00")
        let unknown = try sim.control("POST", "account", ["password": "x"]) as? [String: Any]
        #expect(unknown?["error"] as? String == "bad_request")
    }

    @Test func aStaleSessionOnAnOldAddressBlocksLoginsWhileThisAddressIsOffline() throws {
        let sim = try srunSim(["--session-limit", "3", "--when-full", "kick"])
        try sim.control("POST", "sessions", ["account": account, "ip": "10.9.9.9", "kind": "stale"])
        let client = PortalClient(sim: sim, source: "127.0.0.2")
        #expect(try client.login(account, password)["ecode"] as? String == "E2620")
        #expect(try client.status()["error"] as? String == "not_online_error")
        // An unbind DM cannot remove it.
        let time = "1700000000"
        let sign = dmSign(time: time, username: account, ip: "10.9.9.9")
        let dm = try client.cgi("/cgi-bin/rad_user_dm", [("ip", "10.9.9.9"), ("username", account), ("time", time), ("unbind", "1"), ("sign", sign)])
        #expect(dm["error"] as? String == "not_online_error")
        #expect(try sim.sessions().count == 1)
        try sim.control("DELETE", "sessions", ["account": account])
        Thread.sleep(forTimeInterval: 3.2)
        #expect(try client.login(account, password)["suc_msg"] as? String == "login_ok")
    }

    @Test func statsCountConnectionsAndRequestsOnThePortal() throws {
        let sim = try srunSim()
        let base = String(sim.url.dropLast())
        // curl reuses one connection for both URLs.
        let result = try run("/usr/bin/curl", ["-sS", "--noproxy", "*", base + "/cgi-bin/rad_user_info?callback=a",
                                               base + "/cgi-bin/rad_user_info?callback=b"])
        #expect(result.status == 0)
        let stats = try sim.control("GET", "stats") as? [String: Int]
        #expect(stats?["connections"] == 1 && stats?["requests"] == 2)
    }

    @Test func theRequestLogNamesParametersNeverTheirValues() throws {
        let sim = try srunSim()
        let client = PortalClient(sim: sim)
        #expect(try client.login(account, password)["suc_msg"] as? String == "login_ok")
        _ = try client.get("/", proxiedHost: "www.bit.edu.cn")
        let log = try #require(try sim.control("GET", "requests") as? [[String: Any]])
        #expect(log.map { $0["path"] as? String } == ["/cgi-bin/get_challenge", "/cgi-bin/srun_portal", "/"])
        #expect(log.last?["host"] as? String == "www.bit.edu.cn")
        let login = try #require(log.dropFirst().first)
        #expect((login["params"] as? [String])?.contains("password") == true && login["peer"] as? String == "127.0.0.1")
        let text = String(decoding: try JSONSerialization.data(withJSONObject: log), as: UTF8.self)
        #expect(!text.contains("{MD5}") && !text.contains("SRBX1") && !text.contains(password))
        try sim.control("DELETE", "requests")
        #expect((try sim.control("GET", "requests") as? [Any])?.isEmpty == true)
    }

    @Test func optionsOfTheOtherProtocolAreRefusedAndHelpDocumentsSrun() throws {
        let ccsim = buildProductsDirectory.appendingPathComponent("ccsim").path
        let cc1Option = try run(ccsim, ["--protocol", "srun", "--interval", "5"])
        #expect(cc1Option.status == 2 && cc1Option.standardError.contains("CC/1 option"))
        let srunOption = try run(ccsim, ["--ac-id", "3"])
        #expect(srunOption.status == 2 && srunOption.standardError.contains("--protocol srun"))
        let help = try run(ccsim, ["--help"])
        for text in ["--protocol cc1|srun", "--ac-id", "--session-limit", "--when-full", "--strict-hmd5", "--portal-host",
                     "/control/next-login", "/control/slow-challenge", "/control/captcha", "/control/account", "/control/requests",
                     "/control/next-challenge", "mac-bound", "stale"] {
            #expect(help.standardOutput.contains(text), "\(text)")
        }
    }
}
