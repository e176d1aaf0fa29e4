import CoreVocabulary
import Testing
@testable import Forwarding

/// What each service takes and what a refusal means (issue 31.6), the repeat
/// rule never holding a logout nor a clock set back holding anything (31.7),
/// and digests that a logout is never one line of and the service shows
/// whole (31.9) — pure, on a virtual wall clock.
struct ForwardingLimitsTests {
    typealias Outbox = ForwardingPolicyTests.Outbox
    static let noon = ForwardingPolicyTests.midnight + 12 * 3600

    static func alert(_ title: String, _ body: String = "", urgency: Urgency = .normal) -> ForwardedAlert {
        ForwardedAlert(kind: .notice, title: title, body: body, urgency: urgency, postedAt: 1_780_000_000, key: "k-\(title.hashValue)",
                       host: "dorm-pc", late: false)
    }

    static func body(_ forward: String, _ alert: ForwardedAlert) throws -> String {
        (try ForwardTarget(forward: forward)).request(for: alert, raisedAt: "09:00", localize: .english, now: 1_780_000_123,
                             signer: { key, message in Array((key + [0] + message).prefix(32)) }).body
    }

    /// The JSON string value of `field` in `body`, decoded.
    static func field(_ field: String, _ body: String) -> String {
        if case .string(let text)? = JSONScan.members(body)?[field] { return text }
        return ""
    }

    // MARK: 31.6 — each service's own unit

    @Test func telegramIsCutByUTF16UnitsAndServerChansTitleToo() throws {
        // 2,100 emoji: 2,100 characters, 4,200 UTF-16 units — Telegram refuses over 4,096 units.
        let long = String(repeating: "😀", count: 2100)
        let telegram = try Self.body("tgram://1:AAH/2", Self.alert("通知", long))
        let text = Self.field("text", telegram)
        #expect(text.utf16.count <= 4096 && text.utf16.count > 4000 && text.hasSuffix("…"), "\(text.utf16.count) units")
        let serverchan = try Self.body("schan://SCT1", Self.alert(String(repeating: "🇨🇳", count: 40)))
        let title = Self.field("title", serverchan)
        #expect(title.utf16.count <= 32 && title.unicodeScalars.count <= 32, "\(title.utf16.count) units, \(title.unicodeScalars.count) code points")
        #expect(MessageText.cut("short", utf16: 32) == "short")
    }

    @Test func aSubjectIsFoldedInWordsOfAtMost75OctetsWhateverItsCharacters() {
        // One grapheme of 1 + 600 combining marks (1,201 bytes), then ordinary text.
        let giant = "e" + String(repeating: "\u{301}", count: 600) + " 停电通知 " + String(repeating: "断", count: 100)
        let subject = MailMessage.encodedWords(giant)
        let lines = subject.components(separatedBy: "\r\n ")
        #expect(lines.allSatisfy { $0.utf8.count <= 75 && $0.hasPrefix("=?UTF-8?B?") && $0.hasSuffix("?=") }, "\(lines.map(\.utf8.count))")
        #expect(lines.count > 10)
        let decoded = lines.map { word in Base64Check.decode(String(word.dropFirst(10).dropLast(2))) }
        #expect(decoded.allSatisfy { $0 != nil && String(validating: $0!, as: UTF8.self) != nil }, "each word is whole UTF-8")
        #expect(decoded.compactMap { $0 }.reduce(0) { $0 + $1.count } <= MailMessage.subjectLimit, "cut to the subject's limit")
    }

    // MARK: 31.6 — a refusal of the message, of the target, or of the moment

    @Test func eachServicesAnswerSaysWhoseFaultItIs() throws {
        func rule(_ forward: String) throws -> AnswerRule {
            (try ForwardTarget(forward: forward)).request(for: Self.alert("t"), raisedAt: "", localize: .english, now: 0,
                                 signer: nil).rule
        }
        let telegram = try rule("tgram://1:AAH/2")
        #expect(telegram.judge(status: 400, body: #"{"ok":false,"error_code":400,"description":"Bad Request: message is too long"}"#)
            == .refusedForGood("Telegram: Bad Request: message is too long (error 400, HTTP 400)"))
        #expect(telegram.judge(status: 401, body: #"{"ok":false,"error_code":401,"description":"Unauthorized"}"#)
            == .refused("Telegram: Unauthorized (error 401, HTTP 401)"))
        #expect(telegram.judge(status: 403, body: #"{"ok":false,"error_code":403,"description":"Forbidden: bot was blocked by the user"}"#)
            == .refused("Telegram: Forbidden: bot was blocked by the user (error 403, HTTP 403)"))
        #expect(telegram.judge(status: 429, body: #"{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 5"}"#)
            == .retry("Telegram: Too Many Requests: retry after 5 (error 429, HTTP 429)"))
        let bark = try rule("bark://K")
        #expect(bark.judge(status: 200, body: #"{"code":400,"message":"failed to get device token: no such device"}"#)
            == .refused("Bark: failed to get device token: no such device (code 400, HTTP 200)"))
        #expect(bark.judge(status: 200, body: #"{"code":400,"message":"push failed: PayloadTooLarge"}"#)
            == .refusedForGood("Bark: push failed: PayloadTooLarge (code 400, HTTP 200)"))
        let wecom = try rule("wecombot://K")
        #expect(wecom.judge(status: 200, body: #"{"errcode":40008,"errmsg":"invalid message type"}"#)
            == .refusedForGood("WeCom: invalid message type (errcode 40008, HTTP 200)"))
        #expect(wecom.judge(status: 200, body: #"{"errcode":93000,"errmsg":"invalid webhook url"}"#)
            == .refused("WeCom: invalid webhook url (errcode 93000, HTTP 200)"))
        #expect(wecom.judge(status: 200, body: #"{"errcode":45009,"errmsg":"api freq out of limit"}"#)
            == .retry("WeCom: api freq out of limit (errcode 45009, HTTP 200)"))
        let dingtalk = try rule("dingtalk://T")
        #expect(dingtalk.judge(status: 200, body: #"{"errcode":300001,"errmsg":"token is not exist"}"#)
            == .refused("DingTalk: token is not exist (errcode 300001, HTTP 200)"))
        #expect(dingtalk.judge(status: 200, body: #"{"errcode":40035,"errmsg":"缺少参数 json"}"#)
            == .refusedForGood("DingTalk: 缺少参数 json (errcode 40035, HTTP 200)"))
        let serverchan = try rule("schan://SCT1")
        #expect(serverchan.judge(status: 200, body: #"{"code":40001,"message":"今日免费额度已用完"}"#)
            == .refused("ServerChan: 今日免费额度已用完 (code 40001, HTTP 200)"), "quota or key: the queue waits")
        #expect(serverchan.judge(status: 200, body: #"{"code":40002,"message":"title too long"}"#)
            == .refusedForGood("ServerChan: title too long (code 40002, HTTP 200)"))
        #expect(AnswerRule.status.judge(status: 413, body: "") == .refusedForGood("HTTP 413"))
        #expect(AnswerRule.status.judge(status: 401, body: "") == .refused("HTTP 401"))
        #expect(AnswerRule.status.judge(status: 429, body: "") == .retry("HTTP 429"), "relay test and the daemon agree: wait")
    }

    // MARK: 31.7 — the repeat rule and the clock

    @Test func aSecondLogoutWithinTenMinutesGoesAtOnce() {
        var outbox = Outbox(policy: ForwardingPolicy())
        outbox.raise("Logged out", at: Self.noon, urgency: .critical)
        outbox.raise("Logged out", at: Self.noon + 120, urgency: .critical)
        #expect(outbox.sent.count == 2 && outbox.waiting.isEmpty, "\(outbox.sent)")
        outbox.raise("Notice", at: Self.noon + 130)
        outbox.raise("Notice", at: Self.noon + 140)
        #expect(outbox.waiting.count == 1, "a notice repeated within ten minutes still waits")
    }

    @Test func whatAClockSetBackPutsInTheFutureCountsForNothing() {
        // Eight hours of messages, then the clock jumps back eight hours.
        var outbox = Outbox(policy: ForwardingPolicy(budget: ForwardBudget("3/day")))
        for hour in 0..<3 { outbox.raise("Logged out", at: Self.noon + Double(hour) * 3600, urgency: .critical) }
        let jumped = Self.noon + 2 * 3600 - 8 * 3600
        outbox.raise("Logged out", at: jumped, urgency: .critical)
        #expect(outbox.waiting.isEmpty && outbox.sent.last?.at == jumped, "not held for the budget nor as a repeat: \(outbox.sent)")
        #expect(outbox.policy.budgetLeft(sent: outbox.sent, now: jumped) == 2, "only the message sent now counts")
    }

    // MARK: 31.9 — digests

    @Test func aLogoutHeldWithNoticesGoesFirstOnItsOwnWhenTheQuietEnds() {
        var outbox = Outbox(policy: ForwardingPolicy(quiet: QuietHours("23:00-07:00").map { QuietRule(hours: $0, critical: true) }))
        let night = ForwardingPolicyTests.midnight + 3600
        for index in 0..<5 { outbox.raise("Notice \(index)", at: night + Double(index) * 60) }
        outbox.raise("Logged out", at: night + 600, urgency: .critical)
        #expect(outbox.sent.isEmpty)
        outbox.run(from: night + 700, until: night + 12 * 3600)
        #expect(outbox.sent.map(\.titles) == [["Logged out"], (0..<5).map { "Notice \($0)" }], "\(outbox.sent)")
    }

    @Test func aDigestCarriesWhatTheServiceShowsWholeAndTheRestGoNext() throws {
        let alerts = (0..<1000).map { Self.alert("校园网通知 \($0)", "今晚 23:00 维护认证系统，届时可能需要重新登录。") }
        let target = try ForwardTarget(forward: "tgram://1:AAH/2")
        let first = ForwardDigest.fitting(alerts, in: target.service.messageRoom, time: { _ in "23:20" }, localize: .english)
        #expect(first > 10 && first < 1000, "\(first)")
        let digest = ForwardDigest.alert(Array(alerts.prefix(first)), time: { _ in "23:20" }, localize: .english)
        let text = Self.field("text", try Self.body("tgram://1:AAH/2", digest))
        #expect(!text.hasSuffix("…"), "the digest is not cut: every alert it carries is shown")
        #expect(ForwardDigest.fitting(Array(alerts.prefix(3)), in: target.service.messageRoom, time: { _ in "" }, localize: .english) == 3)
        let huge = [Self.alert("a", String(repeating: "x", count: 10_000)), Self.alert("b")]
        #expect(ForwardDigest.fitting(huge, in: 100, time: { _ in "" }, localize: .english) == 1, "at least one goes")
    }
}

/// Base64 decoding for the tests' checks (the code under test only encodes).
enum Base64Check {
    static func decode(_ text: String) -> [UInt8]? {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var bits: UInt32 = 0
        var count = 0
        var out: [UInt8] = []
        for byte in text.utf8 where byte != UInt8(ascii: "=") {
            guard let index = alphabet.firstIndex(of: byte) else { return nil }
            bits = bits << 6 | UInt32(index)
            count += 6
            if count >= 8 {
                count -= 8
                out.append(UInt8(truncatingIfNeeded: bits >> UInt32(count)))
            }
        }
        return out
    }
}
