import Foundation
import CCRelayCore
import CoreVocabulary
import Testing

/// `[relay]`: the targets and their checks, which alerts go out, and the
/// exact request each service gets.
@Suite struct RelayMessageTests {
    func parse(_ text: String) -> ConfigurationParser.Result {
        ConfigurationParser.parse("[server]\nurl = https://cc.campus.example/\n" + text, file: "/c/ccrelay.conf", home: "/home/s")
    }

    func alert(_ kind: AlertKind = .loggedOut, urgency: Urgency = .critical, late: Bool = false) -> ForwardedAlert {
        ForwardedAlert(
            kind: kind, title: "Logged out \"now\"", body: "登录已被注销，请重新登录\n你已被管理员下线", urgency: urgency,
            postedAt: 1_796_000_000.7, key: "0123456789abcdef0123456789abcdef", host: "dorm-pc", late: late)
    }

    func json(_ text: String) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    // MARK: Configuration

    @Test func anyNumberOfTargetsAndTheKindsAreRead() throws {
        let result = parse("""
            [relay]
            ntfy = https://ntfy.campus.example/ccrelay-20231234
            gotify = https://gotify.campus.example/message?token=AbC.123
            webhook = https://hooks.campus.example/ccrelay
            webhook = http://127.0.0.1:8080/second
            kinds = logged-out, notice, back-online
            ca-file = ~/campus-ca.pem
            """)
        #expect(result.errors.isEmpty, "\(result.errors)")
        #expect(result.warnings.filter { $0.line > 0 }.isEmpty, "\(result.warnings)")
        let c = try #require(result.configuration)
        #expect(c.forwardTargets.map(\.service) == [.ntfy, .gotify, .webhook, .webhook])
        #expect(c.forwardTargets[1].displayName.hasPrefix("gotify https://gotify.campus.example #"), "the token's fingerprint alone (issue 31.8)")
        #expect(c.forwardSelection == ForwardSelection(kinds: [.loggedOut, .notice, .backOnline], criticalNotices: false))
        #expect(c.forwardCAFile == "/home/s/campus-ca.pem")
    }

    @Test func withoutARelayGroupNothingIsForwardedAndTheDefaultKindsAreTheIssuesFour() throws {
        let c = try #require(parse("").configuration)
        #expect(c.forwardTargets.isEmpty)
        let selection = c.forwardSelection
        for kind in [AlertKind.loggedOut, .keepAliveFailing, .credentials] {
            #expect(selection.forwards(Alert(kind: kind, title: "", body: "", urgency: .normal)))
        }
        #expect(selection.forwards(Alert(kind: .notice, title: "", body: "", urgency: .critical)))
        #expect(!selection.forwards(Alert(kind: .notice, title: "", body: "", urgency: .normal)))
        // Issue 33.3: a phone that heard of the trouble hears it is over.
        #expect(selection.forwards(Alert(kind: .backOnline, title: "", body: "", urgency: .low)))
        #expect(!selection.forwards(Alert(kind: .locationOff, title: "", body: "", urgency: .critical)))
        let everything = ForwardSelection(kinds: Set(AlertKind.allCases), criticalNotices: true)
        #expect(!everything.forwards(Alert(kind: .status, title: "", body: "", urgency: .low)), "the status bubble never leaves")
    }

    @Test func badTargetsAreErrorsNamingTheLineAndTheFix() {
        let cases: [(String, String)] = [
            ("ntfy = http://ntfy.campus.example/topic", "https://"),
            ("ntfy = https://ntfy.campus.example/", "topic"),
            ("ntfy = https://ntfy.campus.example/a topic", "https://"),
            ("ntfy = https://ntfy.campus.example/to.pic", "topic"),
            ("gotify = https://gotify.campus.example/message", "token"),
            ("webhook = ftp://hooks.campus.example/", "https://"),
            ("webhook = https:///nohost", "https://"),
            ("webhook = https://hooks.campus.example:99999/x", "https://"),
            ("webhook = https://hooks.campus.example:port/x", "https://"),
            ("webhook = https://hooks.campus.example/#frag", "https://"),
            ("kinds = logged-out, logedout", "did you mean 'logged-out'"),
            ("kinds = status", "unknown alert kind"),
            ("kinds = ,", "empty"),
        ]
        for (line, expected) in cases {
            let result = parse("[relay]\n" + line)
            #expect(result.configuration == nil, "\(line)")
            #expect(result.errors.first?.line == 4, "\(line): \(result.errors)")
            #expect(result.errors.first?.message.contains(expected) == true, "\(line): \(result.errors)")
        }
    }

    @Test func aSecretInAURLIsNeverInAMessage() {
        let result = parse("[relay]\ngotify = http://gotify.campus.example/message?token=TopSecret")
        #expect(result.errors.first?.message.contains("TopSecret") == false, "\(result.errors)")
        let target = try? ForwardTarget(service: .webhook, url: "https://user:pa55word@hooks.campus.example/x?key=K3y")
        let shown = target?.displayName ?? ""
        #expect(shown.hasPrefix("webhook https://hooks.campus.example #") && !shown.contains("K3y") && !shown.contains("pa55word") && !shown.contains("/x"),
                "the server and a fingerprint of the rest (issue 31.8): \(shown)")
    }

    @Test func anUnknownTargetTypeIsAWarningWithASuggestion() throws {
        let result = parse("[relay]\nntfi = https://ntfy.campus.example/t\nslack = https://hooks.slack.example/x")
        #expect(result.configuration != nil)
        let warnings = result.warnings.filter { $0.line > 0 }.map(\.message)
        #expect(warnings.count == 2)
        #expect(warnings[0].contains("unknown target type 'ntfi'") && warnings[0].contains("did you mean 'ntfy'?"), "\(warnings)")
        #expect(warnings[1].contains("known: ntfy, gotify, webhook"), "\(warnings)")
    }

    // MARK: Requests

    @Test func ntfyGetsJSONPublishingToTheServerRootWithUrgentPriorityAndTags() throws {
        let target = try ForwardTarget(service: .ntfy, url: "https://ntfy.campus.example/sub/ccrelay-20231234")
        let request = ForwardMessage.request(alert(), to: target, raisedAt: "02:13", localize: .english)
        #expect(request.url == "https://ntfy.campus.example/sub/")
        #expect(request.headers.contains("Idempotency-Key: 0123456789abcdef0123456789abcdef"))
        let body = try json(request.body)
        #expect(body["topic"] as? String == "ccrelay-20231234")
        #expect(body["title"] as? String == "Logged out \"now\"")
        #expect(body["message"] as? String == "登录已被注销，请重新登录\n你已被管理员下线")
        #expect(body["priority"] as? Int == 5)
        #expect(body["tags"] as? [String] == ["rotating_light", "ccrelay", "dorm-pc"])
        let normal = ForwardMessage.request(alert(.keepAliveFailing, urgency: .normal), to: target, raisedAt: "", localize: .english)
        #expect(try json(normal.body)["priority"] as? Int == 3)
        let low = ForwardMessage.request(alert(.backOnline, urgency: .low), to: target, raisedAt: "", localize: .english)
        #expect(try json(low.body)["priority"] as? Int == 2)
    }

    @Test func gotifyGetsTitleMessageAndPriorityEightForCritical() throws {
        let target = try ForwardTarget(service: .gotify, url: "https://gotify.campus.example/message?token=AbC")
        let request = ForwardMessage.request(alert(), to: target, raisedAt: "", localize: .english)
        #expect(request.url == "https://gotify.campus.example/message?token=AbC")
        let body = try json(request.body)
        #expect(body["title"] as? String == "Logged out \"now\"")
        #expect(body["priority"] as? Int == 8)
        #expect(body["message"] as? String == "登录已被注销，请重新登录\n你已被管理员下线")
    }

    @Test func aWebhookGetsTheAlertAsJSON() throws {
        let target = try ForwardTarget(service: .webhook, url: "https://hooks.campus.example/ccrelay")
        let body = try json(ForwardMessage.request(alert(late: true), to: target, raisedAt: "", localize: .english).body)
        #expect(body["id"] as? String == "0123456789abcdef0123456789abcdef")
        #expect(body["kind"] as? String == "logged-out")
        #expect(body["urgency"] as? String == "critical")
        #expect(body["posted_at"] as? Int == 1_796_000_000)
        #expect(body["host"] as? String == "dorm-pc")
        #expect(body["late"] as? Bool == true)
        #expect(body["body"] as? String == "登录已被注销，请重新登录\n你已被管理员下线", "the webhook's body is the alert's own")
    }

    @Test func aLateAlertSaysWhenItWasRaised() throws {
        let target = try ForwardTarget(service: .ntfy, url: "https://ntfy.campus.example/t")
        let late = ForwardMessage.request(alert(late: true), to: target, raisedAt: "2026-12-01 02:13", localize: .english)
        #expect(try json(late.body)["message"] as? String == "登录已被注销，请重新登录\n你已被管理员下线\n\nDelayed: raised at 2026-12-01 02:13 on dorm-pc.")
        let onTime = ForwardMessage.request(alert(late: false), to: target, raisedAt: "2026-12-01 02:13", localize: .english)
        #expect(try json(onTime.body)["message"] as? String == "登录已被注销，请重新登录\n你已被管理员下线")
    }

    @Test func controlCharactersAndQuotesAreEscapedIntoValidJSON() throws {
        var hostile = alert()
        hostile.title = "a\"b\\c\u{0}\u{1F}\u{7F}\u{2028}</script>"
        hostile.body = String(repeating: "\r\n\t", count: 3)
        for service in ForwardTarget.Service.keyed {
            let url = service == .gotify ? "https://g.example/message?token=t" : "https://n.example/topic"
            let request = ForwardMessage.request(hostile, to: try ForwardTarget(service: service, url: url), raisedAt: "", localize: .english)
            let body = try json(request.body)
            #expect((body["title"] as? String) == hostile.title, "\(service)")
        }
        // The push services carry the title in their own fields, each still valid JSON.
        for forward in ["bark://K", "schan://SCT1", "pushplus://T", "wecombot://K", "dingtalk://T?secret=S", "feishu://H?secret=S", "tgram://1:A/2"] {
            let request = ForwardMessage.request(hostile, to: try ForwardTarget(forward: forward), raisedAt: "", localize: .english,
                                               now: 1, hmacSHA256: { _, _ in [1, 2, 3] })
            #expect(!(try json(request.body)).isEmpty, "\(forward): \(request.body)")
            #expect(request.body.contains("\\u2028") && request.body.contains("\\u0000"), "\(forward): escaped")
        }
    }

    @Test func backOffDoublesFromFiveSecondsToFiveMinutes() {
        #expect(ForwardBackoff.delay(afterFailures: 1) == .seconds(5))
        #expect(ForwardBackoff.delay(afterFailures: 2) == .seconds(10))
        #expect(ForwardBackoff.delay(afterFailures: 6) == .seconds(160))
        #expect(ForwardBackoff.delay(afterFailures: 7) == .seconds(300))
        #expect(ForwardBackoff.delay(afterFailures: Int.max) == .seconds(300))
        #expect(ForwardBackoff.delay(afterFailures: Int.min) == .seconds(5))
    }
}
