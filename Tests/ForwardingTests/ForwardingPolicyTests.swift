import CoreVocabulary
import Testing
@testable import Forwarding

/// Budgets, repeats, quiet hours and digests (issue 26) as rules on a
/// virtual wall clock: a target's lane decides, the test plays the outbox.
@Suite struct ForwardingPolicyTests {
    /// One target's outbox over virtual time: alerts arrive, the policy decides, messages go.
    struct Outbox {
        var policy: ForwardingPolicy
        var utcOffset = 8 * 3600
        var waiting: [WaitingAlert] = []
        var sent: [SentMessage] = []
        var nextID: Int64 = 1

        mutating func raise(_ title: String, at time: Double, urgency: Urgency = .normal) {
            waiting.append(WaitingAlert(id: nextID, title: title, urgency: urgency, postedAt: time))
            nextID += 1
            run(at: time)
        }

        /// Sends what the policy lets go at `time`; when it may go next.
        @discardableResult
        mutating func run(at time: Double) -> Double? {
            while true {
                switch policy.decide(waiting: waiting, sent: sent, now: time, utcOffset: utcOffset) {
                case .idle: return nil
                case .wait(let until, _):
                    #expect(until > time, "a wake-up in the future, never a busy loop")
                    return until
                case .send(let ids):
                    #expect(!ids.isEmpty)
                    sent.append(SentMessage(at: time, titles: waiting.filter { ids.contains($0.id) }.map(\.title)))
                    waiting.removeAll { ids.contains($0.id) }
                }
            }
        }

        /// Follows the wake-ups until nothing waits or `end`.
        mutating func run(from time: Double, until end: Double) {
            var now = time
            while let next = run(at: now), next <= end { now = next }
        }
    }

    /// Midnight, 1 December 2026, in UTC+8 (30 November, 16:00 UTC).
    static let midnight = 1_796_054_400.0

    @Test func twelveAlertsInAnHourAgainstFiveADayAreFiveMessagesAndOneDigestNothingLost() {
        var outbox = Outbox(policy: ForwardingPolicy(budget: ForwardBudget("5/day")))
        let start = Self.midnight + 10 * 3600
        for index in 0..<12 { outbox.raise("alert \(index)", at: start + Double(index) * 300) }
        #expect(outbox.sent.count == 5 && outbox.sent.allSatisfy { $0.titles.count == 1 }, "\(outbox.sent)")
        #expect(outbox.waiting.count == 7, "held, not dropped")
        // A restart changes nothing: the policy keeps no state, the outbox is the store.
        var restarted = Outbox(policy: ForwardingPolicy(budget: ForwardBudget("5/day")), waiting: outbox.waiting, sent: outbox.sent)
        restarted.run(from: start + 3600, until: start + 2 * 86_400)
        #expect(restarted.sent.count == 6 && restarted.waiting.isEmpty)
        let digest = restarted.sent[5]
        #expect(digest.titles.count == 7 && digest.at == start + 86_400, "one digest at the first free slot: \(digest)")
        #expect(Set(restarted.sent.flatMap(\.titles)).count == 12)
    }

    @Test func aLogoutTakesTheLastSlotAloneAndTheRestWaitForTheDigest() {
        var outbox = Outbox(policy: ForwardingPolicy(budget: ForwardBudget("2/hour")))
        let start = Self.midnight + 12 * 3600
        outbox.raise("failing", at: start)
        outbox.waiting.append(WaitingAlert(id: 90, title: "notice", urgency: .low, postedAt: start + 10))
        outbox.waiting.append(WaitingAlert(id: 91, title: "Logged out", urgency: .critical, postedAt: start + 20))
        outbox.run(at: start + 30)
        #expect(outbox.sent.last?.titles == ["Logged out"], "critical first: \(outbox.sent)")
        outbox.run(from: start + 30, until: start + 7200)
        #expect(outbox.sent.last?.titles == ["notice"] && outbox.sent.last?.at == start + 3600)
    }

    @Test func theSameTitleWithinTenMinutesRidesAlongOrGoesOnceFolded() {
        var outbox = Outbox(policy: ForwardingPolicy())
        let start = Self.midnight + 9 * 3600
        outbox.raise("Logged out", at: start)
        outbox.raise("Logged out", at: start + 60)
        outbox.raise("Logged out", at: start + 120)
        #expect(outbox.sent.count == 1 && outbox.waiting.count == 2, "no repeat within ten minutes")
        outbox.run(from: start + 120, until: start + 3600)
        #expect(outbox.sent.count == 2 && outbox.sent[1].titles == ["Logged out", "Logged out"] && outbox.sent[1].at == start + 600,
                "once, folded (×2), after the ten minutes: \(outbox.sent)")
        // A repeat rides along with the next other message.
        var other = Outbox(policy: ForwardingPolicy())
        other.raise("Logged out", at: start)
        other.raise("Logged out", at: start + 60)
        other.raise("Back online", at: start + 90, urgency: .low)
        #expect(other.sent.count == 2 && other.sent[1].titles == ["Logged out", "Back online"], "\(other.sent)")
    }

    @Test func quietHoursAcrossMidnightHoldAllButALogoutAndEndInOneDigest() {
        let quiet = QuietHours("23:20-06:20")
        #expect(quiet != nil && QuietHours("23:20-23:20") == nil && QuietHours("7:00-8:00") == nil && QuietHours("23:20-24:00") == nil)
        var outbox = Outbox(policy: ForwardingPolicy(quiet: quiet.map { QuietRule(hours: $0) }))
        let night = Self.midnight + 86_400
        outbox.raise("keep-alive failing", at: night - 20 * 60)  // 23:40
        outbox.raise("notice", at: night + 3600, urgency: .low)  // 01:00
        outbox.raise("Logged out", at: night + 2 * 3600, urgency: .critical)  // 02:00
        #expect(outbox.sent.map(\.titles) == [["Logged out"]], "a logout goes at once: \(outbox.sent)")
        outbox.run(from: night + 2 * 3600, until: night + 12 * 3600)
        #expect(outbox.sent.count == 2 && Set(outbox.sent[1].titles) == ["keep-alive failing", "notice"], "\(outbox.sent)")
        #expect(outbox.sent[1].at == night + (6 * 60 + 20) * 60, "one digest when the quiet ends, 06:20")
        // quiet-critical: the logout waits too.
        var silent = Outbox(policy: ForwardingPolicy(quiet: quiet.map { QuietRule(hours: $0, critical: true) }))
        silent.raise("Logged out", at: night + 2 * 3600, urgency: .critical)
        #expect(silent.sent.isEmpty)
        // Outside quiet hours nothing waits; the ranges are local time (a clock moved an hour on is out of them).
        var day = Outbox(policy: ForwardingPolicy(quiet: quiet.map { QuietRule(hours: $0) }))
        day.raise("notice", at: Self.midnight + 12 * 3600)
        #expect(day.sent.count == 1)
        var moved = Outbox(policy: ForwardingPolicy(quiet: quiet.map { QuietRule(hours: $0) }))
        moved.raise("notice", at: night + 6 * 3600)  // 06:00: quiet
        #expect(moved.sent.isEmpty)
        moved.utcOffset += 3600  // 07:00 by the moved clock
        moved.run(at: night + 6 * 3600 + 1)
        #expect(moved.sent.count == 1)
    }

    @Test func aDigestSaysWhatItHoldsNewestFirst() throws {
        func alert(_ title: String, _ at: Double, _ key: String, _ urgency: Urgency = .normal) -> ForwardedAlert {
            ForwardedAlert(kind: .notice, title: title, body: "body of \(title)", urgency: urgency, postedAt: at, key: key, host: "pc", late: false)
        }
        let alerts = [alert("Keep-alive failing", 100, "k1"), alert("Logged out", 200, "k2", .critical), alert("Keep-alive failing", 300, "k3")]
        let digest = ForwardDigest.alert(alerts, time: { "t\(Int($0))" }, localize: .english)
        #expect(digest.title == "CC Relay: 3 alerts since t100" && digest.urgency == .critical)
        #expect(digest.body == "t300  Keep-alive failing ×2: body of Keep-alive failing\nt200  Logged out: body of Logged out", "\(digest.body)")
        #expect(ForwardDigest.alert(alerts.reversed(), time: { "\($0)" }, localize: .english).key == digest.key, "the same alerts, the same key")
        let same = ForwardDigest.alert([alert("Logged out", 1, "a"), alert("Logged out", 2, "b")], time: { "t\(Int($0))" }, localize: .english)
        #expect(same.title == "Logged out ×2" && same.body.hasSuffix("2 times since t1."))
        #expect(ForwardBudget("5/day") == ForwardBudget(count: 5, window: 86_400) && ForwardBudget("0/day") == nil && ForwardBudget("5/week") == nil)
        #expect(try ForwardTarget(forward: "schan://SCT1").budget == ForwardBudget(count: 5, window: 86_400) && ForwardTarget(forward: "schan://SCT1?limit=20/hour").budget?.count == 20)
    }
}
