import CoreVocabulary
import Testing
@testable import Forwarding

/// `forward = URL` (issue 26): the push services' URLs parsed natively, the
/// request each documents, and how each answer says yes or no.
@Suite struct PushTargetTests {
    static let alert = ForwardedAlert(
        kind: .loggedOut, title: "Logged out of the campus network", body: "你已被管理员下线", urgency: .critical, postedAt: 1_780_000_000,
        key: "k-1", host: "dorm-pc", late: false)

    static func request(_ forward: String, _ alert: ForwardedAlert = alert) throws -> ForwardRequest {
        (try ForwardTarget(forward: forward)).request(for: alert, raisedAt: "09:00", localize: .english, now: 1_780_000_123.456,
                             signer: { key, message in Array((key + [0] + message).prefix(32)) })
    }

    @Test func eachSchemeNamesItsServiceServerAndKey() throws {
        let cases: [(String, String, String, String)] = [
            ("bark://BarkKey123", "bark", "https://api.day.app", "BarkKey123"),
            ("barks://bark.campus.example:8443/BarkKey123", "bark", "https://bark.campus.example:8443", "BarkKey123"),
            ("schan://SCT123456TabcdefABCDEF", "serverchan", "https://sctapi.ftqq.com", "SCT123456TabcdefABCDEF"),
            ("schan://sctp1234tABCDEF", "serverchan", "https://1234.push.ft07.com", "sctp1234tABCDEF"),
            ("pushplus://0123abcd", "pushplus", "https://www.pushplus.plus", "0123abcd"),
            ("wecombot://693a91f6-7aaa-4bbb", "wecom", "https://qyapi.weixin.qq.com", "693a91f6-7aaa-4bbb"),
            ("dingtalk://tok3n?secret=SEC123", "dingtalk", "https://oapi.dingtalk.com", "tok3n"),
            ("feishu://hook-1?secret=s3", "feishu", "https://open.feishu.cn", "hook-1"),
            ("tgram://123456789:AAH-bot_Token/-100987", "telegram", "https://api.telegram.org", "123456789:AAH-bot_Token"),
            ("schan://SCT1?api=https://127.0.0.1:9443", "serverchan", "https://127.0.0.1:9443", "SCT1"),
        ]
        for (url, service, base, key) in cases {
            let target = try ForwardTarget(forward: url)
            #expect(target.service.name == service && target.push?.base == base && target.push?.key == key, "\(url): \(target)")
            #expect(!target.name.contains(key) && !target.displayName.contains(key), "no key in \(target.name)")
        }
        #expect(try ForwardTarget(forward: "tgram://1:A/@campus_news").push?.chat == "@campus_news")
        #expect(try ForwardTarget(forward: "dingtalk://t?secret=a%2Bb").push?.secret == "a+b", "options are percent-decoded")
        #expect(try ForwardTarget(forward: "bark://K1").name != ForwardTarget(forward: "bark://K2").name, "two devices, two queues")
        let proxied = try ForwardTarget(forward: "tgram://1:A/2?proxy=socks5h://127.0.0.1:1080")
        #expect(proxied.proxy == "socks5h://127.0.0.1:1080")
    }

    @Test func ntfyGotifyAndJsonAreTheTargetsOfTheirOwnKeys() throws {
        #expect(try ForwardTarget(forward: "ntfys://ntfy.sh/ccrelay-1") == ForwardTarget(key: "ntfy", url: "https://ntfy.sh/ccrelay-1"))
        #expect(try ForwardTarget(forward: "gotifys://g.example/AppToken").url == "https://g.example/message?token=AppToken")
        #expect(try ForwardTarget(forward: "jsons://hooks.example/in").url == "https://hooks.example/in")
        #expect(try ForwardTarget(forward: "ntfy://127.0.0.1:8080/topic").url == "http://127.0.0.1:8080/topic", "plain http to loopback")
        #expect(throws: ForwardTargetProblem.self, "plain http elsewhere") { try ForwardTarget(forward: "ntfy://ntfy.sh/topic") }
    }

    @Test func aWrongURLSaysWhatIsWrongAndHowToWriteIt() {
        func problem(_ url: String) -> String {
            do {
                _ = try ForwardTarget(forward: url)
                return "accepted"
            } catch {
                return error.description
            }
        }
        #expect(problem("barrk://K").contains("did you mean 'bark://'"))
        #expect(problem("tgram://notatoken/1").contains("bot token from @BotFather"))
        #expect(problem("tgram://1:A/chat").contains("chat"))
        #expect(problem("bark://K?proxy=ftp://p:1").contains("proxy= must be http://HOST:PORT or socks5h://HOST:PORT"))
        #expect(problem("bark://K?token=x").contains("does not take 'token='"))
        #expect(problem("schan://A/B").contains("SendKey"))
        #expect(problem("bark://K?api=http://api.day.app").contains("api= must be https://"))
        #expect(problem("bark://K?api=https://x.example/path").contains("api= must be https://"))
        #expect(problem("pushplus://has space").contains("without spaces"))
        #expect(!problem("bark://SecretKey?token=x").contains("SecretKey"), "the problem never shows the key")
    }

    @Test func eachServiceGetsTheRequestItDocuments() throws {
        let bark = try Self.request("bark://BarkKey123")
        #expect(bark.url == "https://api.day.app/push" && bark.rule == .code(AnswerCodes(service: "Bark", fields: ["code"], success: 200, words: ["message"],
                                                                                 targetWords: ["device token", "device key"])))
        #expect(bark.body.contains("\"device_key\":\"BarkKey123\"") && bark.body.contains("\"level\":\"critical\"")
            && bark.body.contains("\"group\":\"ccrelay\""))
        var failing = Self.alert
        failing.urgency = .normal
        #expect(try Self.request("bark://K", failing).body.contains("\"level\":\"timeSensitive\""))
        failing.urgency = .low
        #expect(try Self.request("bark://K", failing).body.contains("\"level\":\"passive\""))
        #expect(try Self.request("tgram://1:A/2", failing).body.contains("\"disable_notification\":true"), "low urgency is silent")
        var long = Self.alert
        long.body = String(repeating: "断", count: 5000)
        #expect(try Self.request("bark://K", long).body.utf8.count < 4096, "Bark's payload limit")
        #expect(try Self.request("schan://SCT1").url == "https://sctapi.ftqq.com/SCT1.send")
        #expect(try Self.request("schan://sctp77tXY").url == "https://77.push.ft07.com/send/sctp77tXY.send")
        #expect(try Self.request("wecombot://K-1").url == "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=K-1")
        #expect(try Self.request("tgram://1:A/2").url == "https://api.telegram.org/bot1:A/sendMessage")
        let dingtalk = try Self.request("dingtalk://tok?secret=S")
        #expect(dingtalk.url.hasPrefix("https://oapi.dingtalk.com/robot/send?access_token=tok&timestamp=1780000123456&sign="), "\(dingtalk.url)")
        #expect(try Self.request("dingtalk://tok").url == "https://oapi.dingtalk.com/robot/send?access_token=tok", "unsigned without a secret")
        let feishu = try Self.request("feishu://h?secret=S")
        #expect(feishu.body.contains("\"timestamp\":\"1780000123\"") && feishu.body.contains("\"sign\":"))
        #expect(Set(dingtalk.secretValues) == ["tok", "S"], "the key and the secret are redacted from answers")
        let signed = try Self.request("dingtalk://token1?secret=S")
        #expect(signed.redacting("echo token1 and S-thing") == "echo … and S-thing", "secrets under 4 characters are not blotted")
    }

    @Test func aPushServicesAnswerIsJudgedOnItsCodeNotItsStatus() {
        let serverchan = AnswerRule.code(AnswerCodes(service: "ServerChan", fields: ["code"], success: 0, words: ["message", "info"]))
        #expect(serverchan.judge(status: 200, body: #"{"code":0,"message":"","data":{"pushid":"1"}}"#) == .delivered)
        let quota = serverchan.judge(status: 200, body: #"{"code":40001,"message":"\u4eca\u65e5\u514d\u8d39\u989d\u5ea6\u5df2\u7528\u5b8c","data":null}"#)
        #expect(quota == .refusedForGood("ServerChan: 今日免费额度已用完 (code 40001, HTTP 200)"), "a code the rule does not list: this message")
        #expect(serverchan.judge(status: 502, body: "<html>bad gateway</html>") == .retry("ServerChan: HTTP 502: <html>bad gateway</html>"))
        let feishu = AnswerRule.code(AnswerCodes(service: "Feishu", fields: ["code", "StatusCode"], success: 0, words: ["msg", "StatusMessage"]))
        #expect(feishu.judge(status: 200, body: #"{"StatusCode":0,"StatusMessage":"success"}"#) == .delivered, "older hooks")
        let telegram = AnswerRule.okFlag(service: "Telegram", targetWords: Telegram.targetWords)
        #expect(telegram.judge(status: 200, body: #"{"ok":true,"result":{"text":"a \"quoted\" [text]"}}"#) == .delivered)
        #expect(telegram.judge(status: 400, body: #"{"ok":false,"error_code":400,"description":"Bad Request: chat not found"}"#)
            == .refused("Telegram: Bad Request: chat not found (error 400, HTTP 400)"))
        #expect(AnswerRule.status.judge(status: 204, body: "") == .delivered)
        #expect(JSONScan.members(#"{"a":"\ud83d\ude00","b":[1,{"c":"}"}],"d":-1.5e3,"e":false}"#)
            == ["a": .string("😀"), "d": .number("-1.5e3"), "e": .bool(false)])
        for broken in ["", "[]", "{", #"{"a":}"#, #"{"a":"\u12"}"#, #"{"a" 1}"#, "{\"a\":[1,2}"] {
            #expect(JSONScan.members(broken) == nil, "\(broken)")
        }
    }

    @Test func aWholeTextIsOneObjectAndAnObjectOfObjectsIsReadOneLevelDown() {
        #expect(JSONScan.members(#" {"a":1} "#, whole: true) == ["a": .number("1")])
        for trailing in [#"{"a":1})"#, #"{"a":1}{"b":2}"#, #"{"a":1} x"#] {
            #expect(JSONScan.members(trailing, whole: true) == nil, "\(trailing)")
            #expect(JSONScan.members(trailing) == ["a": .number("1")], "only the leading object, as before")
        }
        #expect(JSONScan.objects(#"{"1":{"ip":"10.0.0.1","n":{"deep":1}},"2":"not an object","3":{}}"#)
                == ["1": ["ip": .string("10.0.0.1")], "3": [:]])
        #expect(JSONScan.objects(#"{"1":{"ip":}}"#) == nil && JSONScan.objects("[]") == nil)
    }

    @Test func aMailTargetIsParsedAndItsMessageIsAProperMail() throws {
        let qq = try ForwardTarget(forward: "mailtos://12345:auth%40code@smtp.qq.com/?to=12345@qq.com")
        #expect(qq.service.name == "mail" && qq.mail?.server == "smtps://smtp.qq.com:465" && qq.mail?.from == "12345@qq.com")
        #expect(qq.mail?.password == "auth@code" && !qq.displayName.contains("12345") && qq.displayName.hasPrefix("E-mail smtp.qq.com:465 #"))
        let starttls = try ForwardTarget(forward: "mailto://me@campus.example:pw@mail.campus.example/?to=a@x.example,b@y.example")
        #expect(starttls.mail?.server == "smtp://mail.campus.example:587" && starttls.mail?.from == "me@campus.example"
            && starttls.mail?.to == ["a@x.example", "b@y.example"])
        #expect(throws: ForwardTargetProblem.self, "no recipient") { try ForwardTarget(forward: "mailtos://u:p@smtp.qq.com/") }
        #expect(throws: ForwardTargetProblem.self, "no password") { try ForwardTarget(forward: "mailtos://u@smtp.qq.com/?to=a@b.c") }
        #expect(throws: ForwardTargetProblem.self, "a header in an address") { try ForwardTarget(forward: "mailtos://u:p@h.example/?to=a@b.c%0D%0ABcc:x@y.z") }

        let request = qq.request(for: Self.alert, raisedAt: "", localize: .english)
        #expect(request.url == "smtps://smtp.qq.com:465" && request.rule == .smtp && request.mail?.to == ["12345@qq.com"])
        #expect(Set(request.secretValues) == ["12345", "auth@code"])
        let lines = request.body.components(separatedBy: "\r\n")
        #expect(lines.contains("Date: Thu, 28 May 2026 20:26:40 +0000"), "the alert's time: \(lines)")
        #expect(lines.contains("Message-ID: <k-1@ccrelay.dorm-pc>"))
        #expect(lines.contains("Subject: =?UTF-8?B?TG9nZ2VkIG91dCBvZiB0aGUgY2FtcHVzIG5ldHdvcms=?="))
        #expect(lines.allSatisfy { $0.utf8.count <= 78 } && !request.body.contains("\n\n"), "CRLF lines under 78")
        #expect(MailMessage.encodedWords(String(repeating: "断", count: 20)).components(separatedBy: "\r\n ").count == 2, "45 bytes a word")
        #expect(MailMessage.date(0) == "Thu, 01 Jan 1970 00:00:00 +0000" && MailMessage.date(951_782_400) == "Tue, 29 Feb 2000 00:00:00 +0000")
        #expect(AnswerRule.smtp.judge(status: 535, body: "Login denied") == .refused("E-mail: Login denied (SMTP 535)"))
        #expect(AnswerRule.smtp.judge(status: 451, body: "try later") == .retry("E-mail: try later (SMTP 451)"), "4xx: try again")
        #expect(AnswerRule.smtp.judge(status: 554, body: "5.7.1 rejected", afterData: true) == .refusedForGood("E-mail: 5.7.1 rejected (SMTP 554)"),
                "a 5xx to the message's end: this message alone (issue 31.6)")
    }

    /// Issue 33.7: `relay test email` matched nothing although the target is shown as "E-mail".
    @Test func relayTestNamesATargetAsItIsShown() throws {
        let mail = try ForwardTarget(forward: "mailtos://12345:auth%40code@smtp.qq.com/?to=12345@qq.com")
        for name in ["mail", "email", "E-mail", "Email", "mailtos", "mailtos://12345", mail.displayName] {
            #expect(mail.isNamed(name), "\(name)")
        }
        let bark = try ForwardTarget(forward: "bark://DEVICEKEY1234")
        for name in ["bark", "Bark", "barks", "bark://"] { #expect(bark.isNamed(name), "\(name)") }
        for name in ["ntfy", "mail", "e", "webhook", ""] { #expect(!bark.isNamed(name), "\(name)") }
    }

}

