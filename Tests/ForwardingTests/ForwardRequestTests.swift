import Foundation
import CoreVocabulary
import Testing
@testable import Forwarding

/// The exact request each web service gets (ntfy, gotify, a webhook), the
/// late note, JSON escaping for every service, the back-off.
@Suite struct ForwardRequestTests {
    func alert(_ kind: AlertKind = .loggedOut, urgency: Urgency = .critical, late: Bool = false) -> ForwardedAlert {
        ForwardedAlert(
            kind: kind, title: "Logged out \"now\"", body: "登录已被注销，请重新登录\n你已被管理员下线", urgency: urgency,
            postedAt: 1_796_000_000.7, key: "0123456789abcdef0123456789abcdef", host: "dorm-pc", late: late)
    }

    func json(_ text: String) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    // MARK: Requests

    @Test func ntfyGetsJSONPublishingToTheServerRootWithUrgentPriorityAndTags() throws {
        let target = try ForwardTarget(key: "ntfy", url: "https://ntfy.campus.example/sub/ccrelay-20231234")
        let request = target.request(for: alert(), raisedAt: "02:13", localize: .english)
        #expect(request.url == "https://ntfy.campus.example/sub/")
        #expect(request.headers.contains("Idempotency-Key: 0123456789abcdef0123456789abcdef"))
        let body = try json(request.body)
        #expect(body["topic"] as? String == "ccrelay-20231234")
        #expect(body["title"] as? String == "Logged out \"now\"")
        #expect(body["message"] as? String == "登录已被注销，请重新登录\n你已被管理员下线")
        #expect(body["priority"] as? Int == 5)
        #expect(body["tags"] as? [String] == ["rotating_light", "ccrelay", "dorm-pc"])
        let normal = target.request(for: alert(.keepAliveFailing, urgency: .normal), raisedAt: "", localize: .english)
        #expect(try json(normal.body)["priority"] as? Int == 3)
        let low = target.request(for: alert(.backOnline, urgency: .low), raisedAt: "", localize: .english)
        #expect(try json(low.body)["priority"] as? Int == 2)
    }

    @Test func gotifyGetsTitleMessageAndPriorityEightForCritical() throws {
        let target = try ForwardTarget(key: "gotify", url: "https://gotify.campus.example/message?token=AbC")
        let request = target.request(for: alert(), raisedAt: "", localize: .english)
        #expect(request.url == "https://gotify.campus.example/message?token=AbC")
        let body = try json(request.body)
        #expect(body["title"] as? String == "Logged out \"now\"")
        #expect(body["priority"] as? Int == 8)
        #expect(body["message"] as? String == "登录已被注销，请重新登录\n你已被管理员下线")
    }

    @Test func aWebhookGetsTheAlertAsJSON() throws {
        let target = try ForwardTarget(key: "webhook", url: "https://hooks.campus.example/ccrelay")
        let body = try json(target.request(for: alert(late: true), raisedAt: "", localize: .english).body)
        #expect(body["id"] as? String == "0123456789abcdef0123456789abcdef")
        #expect(body["kind"] as? String == "logged-out")
        #expect(body["urgency"] as? String == "critical")
        #expect(body["posted_at"] as? Int == 1_796_000_000)
        #expect(body["host"] as? String == "dorm-pc")
        #expect(body["late"] as? Bool == true)
        #expect(body["body"] as? String == "登录已被注销，请重新登录\n你已被管理员下线", "the webhook's body is the alert's own")
    }

    @Test func aLateAlertSaysWhenItWasRaised() throws {
        let target = try ForwardTarget(key: "ntfy", url: "https://ntfy.campus.example/t")
        let late = target.request(for: alert(late: true), raisedAt: "2026-12-01 02:13", localize: .english)
        #expect(try json(late.body)["message"] as? String == "登录已被注销，请重新登录\n你已被管理员下线\n\nDelayed: raised at 2026-12-01 02:13 on dorm-pc.")
        let onTime = target.request(for: alert(late: false), raisedAt: "2026-12-01 02:13", localize: .english)
        #expect(try json(onTime.body)["message"] as? String == "登录已被注销，请重新登录\n你已被管理员下线")
    }

    @Test func controlCharactersAndQuotesAreEscapedIntoValidJSON() throws {
        var hostile = alert()
        hostile.title = "a\"b\\c\u{0}\u{1F}\u{7F}\u{2028}</script>"
        hostile.body = String(repeating: "\r\n\t", count: 3)
        for key in PushServices.configurationKeys {
            let url = key == "gotify" ? "https://g.example/message?token=t" : "https://n.example/topic"
            let request = try ForwardTarget(key: key, url: url).request(for: hostile, raisedAt: "", localize: .english)
            let body = try json(request.body)
            #expect((body["title"] as? String) == hostile.title, "\(key)")
        }
        // The push services carry the title in their own fields, each still valid JSON.
        for forward in ["bark://K", "schan://SCT1", "pushplus://T", "wecombot://K", "dingtalk://T?secret=S", "feishu://H?secret=S", "tgram://1:A/2"] {
            let request = (try ForwardTarget(forward: forward)).request(for: hostile, raisedAt: "", localize: .english,
                                               now: 1, signer: { _, _ in [1, 2, 3] })
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
