@testable import SrunProtocol
import Testing

/// Reading the portal's answers: JSONP exactly as sent, plain JSON, the
/// legacy text of rad_user_info, and hostile answers (the wrong callback,
/// bytes after it, numbers as strings and strings as numbers, huge bodies,
/// control characters, a malformed device list).
@Suite struct AnswerReadingTests {
    static let callback = "jQuery112412345_1700000000000"

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
    static func jsonp(_ json: String) -> [UInt8] { bytes(callback + "(" + json + ")") }

    /// BitSrunLoginGo #53's challenge answer (the Srun protocol notes §2.2).
    static let challengeJSON = #"{"challenge":"b0697b77b6575984af22ddc2bd0a4910804fb8484f6d434a1020b86991a8d525","client_ip":"10.212.18.45","ecode":0,"error":"ok","error_msg":"","expire":"60","online_ip":"10.212.18.45","res":"ok","srun_ver":"SRunCGIAuthIntfSvr V1.18 B20210909","st":1759064806}"#
    /// BitSrunLoginGo #23's online answer (§2.4), with a device list added.
    static let online = #"{"ServerFlag":4294967040,"add_time":1685258888,"all_bytes":25648214940,"billing_name":"中国联通-cucc","bytes_in":21936525994,"bytes_out":3711688946,"checkout_date":0,"domain":"cucc","error":"ok","group_id":"19","keepalive_time":1685431984,"online_device_total":"1","online_ip":"10.111.15.224","online_ip6":"2001:250:1800:1960::8f8","package_id":"0","products_id":"19","products_name":"中国联通-cucc-50元/100M","real_name":"","remain_bytes":0,"remain_seconds":0,"sum_bytes":208603980192,"sum_seconds":2549617,"sysver":"1.01.20210607","user_balance":0,"user_charge":0,"user_mac":"","user_name":"","wallet_balance":0}"#

    func challenge(_ body: [UInt8]) -> Result<SrunChallenge.Answer, SrunAnswer.Problem> { SrunChallenge.read(body, callback: Self.callback) }

    @Test func aChallengeIsReadFromJSONPAndFromPlainJSON() throws {
        let expected = SrunChallenge(token: "b0697b77b6575984af22ddc2bd0a4910804fb8484f6d434a1020b86991a8d525", clientIP: "10.212.18.45", expire: 60,
                                     serverVersion: "SRunCGIAuthIntfSvr V1.18 B20210909")
        #expect(try challenge(Self.jsonp(Self.challengeJSON)).get() == .issued(expected))
        #expect(try challenge(Self.bytes(" " + Self.challengeJSON + "\n")).get() == .issued(expected))
    }

    @Test(arguments: [
        ("another callback", "jsonp(" + challengeJSON + ")"), ("a semicolon after it", callback + "(" + challengeJSON + ");"),
        ("a newline after it", callback + "(" + challengeJSON + ")\n"), ("bytes after the JSON", callback + "(" + challengeJSON + " x)"),
        ("no JSON", callback + "(ok)"), ("not an object", callback + "([1,2])"), ("truncated", callback + "(" + challengeJSON.dropLast(5) + ")"),
        ("no closing parenthesis", callback + "(" + challengeJSON + " "), ("text", "login_ok"), ("empty", ""),
        ("a second object", challengeJSON + challengeJSON),
    ])
    func anAnswerThatIsNotExactlyJSONPOrJSONIsAProtocolError(_ what: String, _ body: String) {
        #expect(throws: SrunAnswer.Problem.self, "\(what)") { try challenge(Self.bytes(body)).get() }
    }

    @Test func theProblemNeverQuotesTheAnswer() {
        let secretLooking = "jsonp({\"error\":\"<script>alert(1)</script>\"})"
        guard case .failure(let problem) = challenge(Self.bytes(secretLooking)) else { Issue.record("read as a challenge"); return }
        #expect(!problem.text.contains("script") && !problem.text.contains("jsonp"), "\(problem.text)")
    }

    @Test(arguments: [
        ("short", #"{"challenge":"abc","error":"ok"}"#), ("not hex", #"{"challenge":"\#(String(repeating: "g", count: 64))","error":"ok"}"#),
        ("a number", #"{"challenge":12,"error":"ok"}"#), ("missing", #"{"error":"ok","res":"ok"}"#),
        ("65 digits", #"{"challenge":"\#(String(repeating: "a", count: 65))","error":"ok"}"#),
    ])
    func aChallengeMustBe64HexDigits(_ what: String, _ json: String) {
        #expect(throws: SrunAnswer.Problem.self, "\(what)") { try challenge(Self.jsonp(json)).get() }
    }

    @Test func aChallengeRefusedIsClassifiedAndAnInvalidClientIPIsDropped() throws {
        #expect(try challenge(Self.jsonp(#"{"error":"login_error","ecode":"E2531","error_msg":"E2531: User not found."}"#)).get()
                == .refused(.badCredentials, words: "E2531: User not found."))
        let token = String(repeating: "ab", count: 32)
        guard case .issued(let issued) = try challenge(Self.jsonp(#"{"challenge":"\#(token)","client_ip":"10.0.0.1; rm -rf","expire":"x","res":"ok"}"#)).get()
        else { Issue.record("not issued"); return }
        #expect(issued.clientIP == nil && issued.expire == nil)
    }

    @Test func theErrorCodeIsANumberOrAStringAndNumbersMayBeStrings() throws {
        let numeric = SrunAnswer(members: try SrunAnswer.read(Self.bytes(#"{"ecode":0,"n":"5.00","m":7,"neg":-1,"big":1e300,"e":"1e3","bad":"5 00"}"#),
                                                              callback: nil).get().members)
        #expect(numeric.text("ecode") == "0")
        #expect(numeric.amount("n") == 5 && numeric.count("n") == 5 && numeric.count("m") == 7 && numeric.text("m") == "7")
        #expect(numeric.count("neg") == nil && numeric.amount("neg") == -1)
        #expect(numeric.count("big") == nil && numeric.amount("big") == nil, "beyond the bounds")
        #expect(numeric.count("e") == 1000 && numeric.count("bad") == nil && numeric.count("missing") == nil)
        let string = try SrunAnswer.read(Self.bytes(#"{"ecode":"E2553"}"#), callback: nil).get()
        #expect(string.text("ecode") == "E2553")
    }

    @Test func aLoginAnswerIsALoginAnAddressAlreadyOnlineOrARefusal() throws {
        let success = #"{"ServerFlag":0,"access_token":"x","client_ip":"10.1.2.3","ecode":0,"error":"ok","error_msg":"","online_ip":"10.1.2.3","ploy_msg":"E0000: Login is successful.","res":"ok","srun_ver":"SRunCGIAuthIntfSvr V1.18 B20231026","suc_msg":"login_ok"}"#
        #expect(try SrunLoginAnswer.read(Self.jsonp(success), callback: Self.callback).get()
                == .loggedIn(SrunLoginGrant(onlineIP: "10.1.2.3", message: nil, serverVersion: "SRunCGIAuthIntfSvr V1.18 B20231026")))
        let said = #"{"error":"ok","online_ip":"10.1.2.3","ploy_msg":"您的账户余额不足5元"}"#
        #expect(try SrunLoginAnswer.read(Self.jsonp(said), callback: Self.callback).get()
                == .loggedIn(SrunLoginGrant(onlineIP: "10.1.2.3", message: "您的账户余额不足5元")))
        let already = #"{"error":"ok","suc_msg":"ip_already_online_error","online_ip":"10.1.2.3"}"#
        #expect(try SrunLoginAnswer.read(Self.jsonp(already), callback: Self.callback).get() == .alreadyOnline(ip: "10.1.2.3"))
        #expect(try SrunLoginAnswer.read(Self.jsonp(#"{"res":"ok"}"#), callback: Self.callback).get() == .loggedIn(SrunLoginGrant(onlineIP: nil)),
                "res stands in for a missing error")
    }

    @Test func theWordsShownAreBoundedAndFreeOfControlCharacters() throws {
        let words = "E2553: Password\u{1B}[31m is\u{0}\n\u{202E}error." + String(repeating: "x", count: 5000)
        let json = #"{"error":"login_error","ecode":"E2553","error_msg":"\#(words.replacingOccurrences(of: "\u{0}", with: "\\u0000").replacingOccurrences(of: "\n", with: "\\n").replacingOccurrences(of: "\u{1B}", with: "\\u001b"))"}"#
        guard case .refused(let refusal, let shown) = try SrunLoginAnswer.read(Self.jsonp(json), callback: Self.callback).get() else {
            Issue.record("not refused"); return
        }
        #expect(refusal == .badCredentials)
        #expect(shown.hasPrefix("E2553: Password[31m is error.xxx"), "\(shown.prefix(40))")
        #expect(shown.count == 300)
        #expect(shown.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7F && $0 != "\u{202E}" })
    }

    @Test func anAnswerOver64KiBIsRefusedUnread() {
        let huge = Self.jsonp(#"{"error":"ok","pad":""# + String(repeating: "x", count: 64 << 10) + #""}"#)
        #expect(throws: SrunAnswer.Problem(text: "the answer is larger than 64 KiB")) { try SrunUserInfo.read(huge, callback: Self.callback).get() }
    }

    @Test func anOnlineAnswerGivesTheAccountEveryFieldChecked() throws {
        let detail = #"{\"11\":{\"ip\":\"10.111.15.224\",\"ip6\":\"::\",\"class_name\":\"PC\",\"os_name\":\"Linux\",\"add_time\":1685258888},\"7\":{\"ip\":\"10.0.0.9\",\"class_name\":\"Mobile\",\"os_name\":\"Android\u0007\"}}"#
        let json = Self.online.replacingOccurrences(of: #""user_name":"""#, with: #""user_name":"2024000001@cucc","online_device_detail":""# + detail + #"""#)
        let info = try SrunUserInfo.read(Self.jsonp(json), callback: Self.callback).get()
        #expect(info == .online(SrunAccount(
            userName: "2024000001@cucc", onlineIP: "10.111.15.224", onlineIP6: "2001:250:1800:1960::8f8", deviceTotal: 1,
            devices: [SrunDevice(className: "PC", osName: "Linux", ip: "10.111.15.224", ip6: "::"),
                      SrunDevice(className: "Mobile", osName: "Android", ip: "10.0.0.9")],
            sumBytes: 208_603_980_192, sumSeconds: 2_549_617, remainBytes: 0, userBalance: 0, walletBalance: 0, addTime: 1_685_258_888)))
    }

    @Test(arguments: [
        ("not JSON", "\"online_device_detail\":\"[not json\""), ("an array", "\"online_device_detail\":\"[1,2]\""),
        ("a number", "\"online_device_detail\":5"), ("scalars", #""online_device_detail":"{\"1\":\"x\",\"2\":3}""#),
        ("missing", "\"x\":1"),
    ])
    func aMalformedDeviceListIsNoDevices(_ what: String, _ member: String) throws {
        let json = #"{"error":"ok","online_ip":"10.1.2.3","online_device_total":"2","user_balance":"5.00","#  + member + "}"
        guard case .online(let account) = try SrunUserInfo.read(Self.jsonp(json), callback: Self.callback).get() else {
            Issue.record("\(what): not online"); return
        }
        #expect(account.devices.isEmpty, "\(what)")
        #expect(account.deviceTotal == 2 && account.userBalance == 5, "numbers as strings")
    }

    @Test func manyDevicesAreBounded() throws {
        let sessions = (0..<500).map { #"\"\#($0)\":{\"ip\":\"10.0.0.1\"}"# }.joined(separator: ",")
        let json = #"{"error":"ok","online_device_detail":"{"# + sessions + #"}"}"#
        guard case .online(let account) = try SrunUserInfo.read(Self.jsonp(json), callback: Self.callback).get() else {
            Issue.record("not online"); return
        }
        #expect(account.devices.count == 64)
    }

    @Test func anOfflineAnswerGivesTheAddressThePortalSees() throws {
        let offline = #"{"client_ip":"10.212.18.45","ecode":0,"error":"not_online_error","error_msg":"","online_ip":"10.212.18.45","res":"not_online_error","srun_ver":"SRunCGIAuthIntfSvr V1.18 B20210909","st":1759064806}"#
        #expect(try SrunUserInfo.read(Self.jsonp(offline), callback: Self.callback).get() == .offline(clientIP: "10.212.18.45"))
        #expect(throws: SrunAnswer.Problem.self) {
            try SrunUserInfo.read(Self.jsonp(#"{"error":"login_error"}"#), callback: Self.callback).get()
        }
    }

    @Test func theLegacyTextFormIsReadBestEffort() throws {
        #expect(try SrunUserInfo.read(Self.bytes("not_online"), callback: Self.callback).get() == .offline(clientIP: nil))
        #expect(try SrunUserInfo.read(Self.bytes("not_online_error\n"), callback: Self.callback).get() == .offline(clientIP: nil))
        let list = "2024000001,1685258888,1685431984,0,0,0,208603980192,2549617,10.111.15.224,0,,"
        #expect(try SrunUserInfo.read(Self.bytes(list), callback: Self.callback).get()
                == .online(SrunAccount(userName: "2024000001", onlineIP: "10.111.15.224", sumBytes: 208_603_980_192, sumSeconds: 2_549_617)))
        for broken in ["2024000001,1,2", "a,b,c,d,e,f,g,h,not-an-ip", "other(" + list + ")"] {
            #expect(throws: SrunAnswer.Problem.self, "\(broken)") { try SrunUserInfo.read(Self.bytes(broken), callback: Self.callback).get() }
        }
    }

    @Test func logoutAnswersOfBothKinds() throws {
        func read(_ json: String) throws -> SrunLogoutAnswer { try SrunLogoutAnswer.read(Self.jsonp(json), callback: Self.callback).get() }
        #expect(try read(#"{"error":"ok","res":"ok"}"#) == .loggedOut)
        #expect(try read(#"{"error":"logout_ok"}"#) == .loggedOut)
        #expect(try read(#"{"error":"not_online_error"}"#) == .notOnline)
        #expect(try read(#"{"error":"login_error","error_msg":"You are not online."}"#) == .notOnline)
        #expect(try read(#"{"error":"sign_error"}"#) == .refused(.protocolError, words: "sign_error"))
    }

    @Test func theCaptchaCheck() throws {
        #expect(try SrunCaptcha.read(status: 200, body: Self.bytes(#"{"code":0,"data":"1"}"#)).get() == true)
        #expect(try SrunCaptcha.read(status: 200, body: Self.bytes(#"{"code":0,"data":"0"}"#)).get() == false)
        #expect(try SrunCaptcha.read(status: 404, body: Self.bytes("<html>not found</html>")).get() == false)
        #expect(throws: SrunAnswer.Problem.self) { try SrunCaptcha.read(status: 200, body: Self.bytes(#"{"code":1,"data":"1"}"#)).get() }
        #expect(throws: SrunAnswer.Problem.self) { try SrunCaptcha.read(status: 500, body: []).get() }
    }
}
