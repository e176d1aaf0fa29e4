import Foundation
import SrunCodec
import TestSupport
import Testing

/// rad_user_info (§9.5), the two logouts (§9.6) and the §8.3 vectors.
@Suite struct SrunStatusTests {
    @Test func radUserInfoOfflineAndOnlineFieldSets() throws {
        let sim = try srunSim()
        let client = PortalClient(sim: sim, source: "127.0.0.2")
        let offline = try client.status()
        #expect(Set(offline.keys) == ["client_ip", "ecode", "error", "error_msg", "online_ip", "res", "srun_ver", "st"])
        #expect(offline["error"] as? String == "not_online_error" && offline["res"] as? String == "not_online_error")
        #expect(offline["online_ip"] as? String == "127.0.0.2" && offline["ecode"] as? Int == 0)

        #expect(try client.login(account, password)["suc_msg"] as? String == "login_ok")
        let online = try client.status()
        #expect(online["error"] as? String == "ok" && online["user_name"] as? String == account)
        #expect(online["online_ip"] as? String == "127.0.0.2")
        for name in ["add_time", "keepalive_time", "sum_bytes", "sum_seconds", "bytes_in", "bytes_out", "user_balance", "wallet_balance",
                     "remain_bytes", "remain_seconds"] {
            #expect(online[name] is NSNumber && !(online[name] is String), "\(name) is a number")
        }
        for name in ["online_device_total", "group_id", "products_id", "package_id", "products_name", "billing_name", "user_mac",
                     "online_ip6", "sysver", "domain"] {
            #expect(online[name] is String, "\(name) is a string")
        }
        #expect(online["online_device_total"] as? String == "1")
        let detail = try #require(online["online_device_detail"] as? String)
        let devices = try #require(try JSONSerialization.jsonObject(with: Data(detail.utf8)) as? [String: [String: Any]])
        #expect(devices.count == 1)
        let device = try #require(devices.values.first)
        #expect(device["ip"] as? String == "127.0.0.2" && device["class_name"] as? String == "Linux" && device["os_name"] as? String == "Linux")
        #expect(device["add_time"] as? Int == online["add_time"] as? Int && device["ip6"] is String && device["user_mac"] is String)
    }

    @Test func logoutNeedsNoPasswordAndSaysWhenNotOnline() throws {
        let sim = try srunSim()
        let client = PortalClient(sim: sim, source: "127.0.0.2")
        #expect(try client.login(account, password)["suc_msg"] as? String == "login_ok")
        let wrongUser = try client.logout(otherAccount)
        #expect(wrongUser["error"] as? String == "login_error" && wrongUser["error_msg"] as? String == "You are not online.")
        let out = try client.logout(account)
        #expect(out["error"] as? String == "ok" && out["res"] as? String == "ok" && out["online_ip"] as? String == "127.0.0.2")
        #expect(try client.status()["error"] as? String == "not_online_error")
        let again = try client.logout(account)
        #expect(again["error"] as? String == "login_error" && again["error_msg"] as? String == "You are not online.")
    }

    @Test func dmLogoutVerifiesItsSignAndTakesTheUsernameWithoutDomain() throws {
        let domainAccount = "2024000003@cmcc"
        let sim = try srunSim(["--user", "\(domainAccount):pw"])
        let client = PortalClient(sim: sim, source: "127.0.0.2")
        #expect(try client.login(domainAccount, "pw")["suc_msg"] as? String == "login_ok")
        func dm(_ username: String, sign: String? = nil) throws -> [String: Any] {
            let time = "1700000123"
            let signed = sign ?? dmSign(time: time, username: username, ip: "127.0.0.2")
            return try client.cgi("/cgi-bin/rad_user_dm", [("ip", "127.0.0.2"), ("username", username), ("time", time), ("unbind", "1"),
                                                           ("sign", signed)])
        }
        #expect(try dm("2024000003", sign: String(repeating: "0", count: 40))["error"] as? String == "sign_error")
        #expect(try client.status()["error"] as? String == "ok")
        let out = try dm("2024000003")
        #expect(out["error"] as? String == "logout_ok" && out["ecode"] as? Int == 0)
        #expect(try client.status()["error"] as? String == "not_online_error")
        #expect(try dm("2024000003")["error"] as? String == "not_online_error")
    }

    /// §8.3, sent byte for byte with the token fixed: the portal's script, BIT's empty-message
    /// hmd5, and Go's sorted keys with MD5(password). `ip` is 10.1.2.3, a hint only.
    @Test(arguments: [
        ("0efbbecd17df0cd963697d0182b3e430", "a963499b18efa2519966ca7d310c03f19373938c",
         "{SRBX1}XeZyRIj96CrbTet5A0MkVI71PG+TRVlmjg4J+MO7KyQNZnVp61YpFPFnmb0eJloq5URTEZa0WjD4vRMClsF47G3sMJZXd3HELFo5yb54UDPWBEPX8gNiUcqsWvbEVAFwehD4PvxBXYY="),
        ("12b7df856574be74a29fa124bd70e85d", "c3f535476bb1011db9f91ec5eb407e5543ec91c1",
         "{SRBX1}XeZyRIj96CrbTet5A0MkVI71PG+TRVlmjg4J+MO7KyQNZnVp61YpFPFnmb0eJloq5URTEZa0WjD4vRMClsF47G3sMJZXd3HELFo5yb54UDPWBEPX8gNiUcqsWvbEVAFwehD4PvxBXYY="),
        ("1c5813c28bd194d1953f93d397974640", "5b103e849adea27fec5c1da7a93b2e1c0f133ca8",
         "{SRBX1}0Y+fpk1ye9PcMXzpiX2pRF251a3NgoAOkErxPXqfHEFV9ksQeQuc4VBrrZ8PcIWQH1TzUC1Pq6GK01QRqdgyH2qpK9cpc+AjI3cOf070Hol0BXIYyECWbyky5ND0R949WDBVmeIftoH="),
    ])
    func section83VectorsAreGranted(hmd5: String, chksum: String, info: String) throws {
        let token = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
        let sim = try srunSim()
        try sim.control("POST", "next-challenge", ["token": token])
        let client = PortalClient(sim: sim, source: "127.0.0.5")
        #expect(try client.challenge(account, ip: "10.1.2.3")["challenge"] as? String == token)
        let granted = try client.cgi("/cgi-bin/srun_portal", [
            ("action", "login"), ("username", account), ("password", "{MD5}" + hmd5), ("ac_id", "1"), ("ip", "10.1.2.3"),
            ("chksum", chksum), ("info", info), ("n", "200"), ("type", "1"), ("os", "Linux"), ("name", "Linux"), ("double_stack", "0"),
        ])
        #expect(granted["suc_msg"] as? String == "login_ok")
        #expect(granted["online_ip"] as? String == "127.0.0.5")
    }

    @Test func section83DMSignVector() throws {
        let sim = try srunSim()
        let client = PortalClient(sim: sim)
        func dm(_ sign: String) throws -> String? {
            try client.cgi("/cgi-bin/rad_user_dm", [("ip", "10.1.2.3"), ("username", account), ("time", "1700000000"), ("unbind", "1"),
                                                    ("sign", sign)])["error"] as? String
        }
        #expect(try dm("9f255247b0df3f154837fa1600bc144914106dde") == "not_online_error")
        try sim.control("POST", "sessions", ["account": account, "ip": "10.1.2.3"])
        #expect(try dm("9f255247b0df3f154837fa1600bc144914106ddf") == "sign_error")
        #expect(try dm("9f255247b0df3f154837fa1600bc144914106dde") == "logout_ok")
        #expect(try sim.sessions().isEmpty)
    }
}
