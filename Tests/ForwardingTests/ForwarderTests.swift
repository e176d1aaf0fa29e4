import CoreVocabulary
import Forwarding
import Testing

/// The forwarding lanes' rules on a virtual clock (moved down from the
/// daemon shell's tests): one request at a time per target, back-off,
/// flushes, late marks, refusals and the `relay-refused` alert, holds.
@Suite struct ForwarderTests {
    @Test func aTargetThatFailsIsRetriedWithBackOffAndTheMessageIsMarkedLate() throws {
        let rig = try LaneRig()
        rig.raise("logged out")
        rig.answer("ntfy", .retry("Could not resolve host: ntfy.campus.example"))
        rig.answer("gotify")
        rig.advance(by: 4)
        #expect(rig.postCount("ntfy") == 1, "not before the back-off")
        rig.advance(by: 1.1)
        #expect(rig.postCount("ntfy") == 2, "5 s after the first failure")
        rig.answer("ntfy", .retry("Could not resolve host: ntfy.campus.example"))
        rig.advance(by: 9)
        #expect(rig.postCount("ntfy") == 2)
        rig.advance(by: 1.1)
        #expect(rig.postCount("ntfy") == 3, "10 s after the second")
        #expect(rig.posts.last?.message.late == true, "an attempt failed before: late")
        #expect(rig.posts.first { $0.target == rig.name("gotify") }?.message.late == false, "on time: not late")
        #expect(rig.logged.filter { $0.contains("cannot forward alerts to ntfy") }.count == 1, "said once per episode: \(rig.logged)")
        rig.answer("ntfy")
        #expect(rig.logged.contains { $0.contains("forwarding to ntfy") && $0.contains("works again") })
        rig.advance(by: 3600)
        #expect(rig.postCount("ntfy") == 3, "delivered once")
    }

    @Test func oneRequestAtATimeNewAlertsWaitForTheAnswer() throws {
        let rig = try LaneRig(["ntfy"])
        rig.raise("first")
        rig.raise("second")
        #expect(rig.postCount("ntfy") == 1, "the lane is busy with the first")
        rig.answer("ntfy")
        #expect(rig.postCount("ntfy") == 2 && rig.posts.last?.message.title == "second", "the next goes once the first is answered")
    }

    @Test func theSessionComingBackFlushesTheOutboxAtOnce() throws {
        let rig = try LaneRig(["ntfy"])
        rig.raise("logged out")
        rig.answer("ntfy", .retry("Failed to connect"))
        rig.advance(by: 5.1)
        rig.answer("ntfy", .retry("Failed to connect"))
        rig.advance(by: 2)
        rig.send(.flush)
        #expect(rig.postCount("ntfy") == 3, "sent at the flush, not after the back-off")
        #expect(rig.timers.isEmpty, "the back-off's timer is disarmed")
    }

    @Test func aTargetThatRefusesRaisesOneAlertThatClosesWhenItTakesThemAgain() throws {
        let rig = try LaneRig(["gotify"])
        rig.raise("logged out")
        rig.answer("gotify", .refused("HTTP 401"))
        #expect(rig.raised.count == 1 && rig.raised.first?.hasPrefix("gotify https://gotify.campus.example") == true, "\(rig.raised)")
        rig.advance(by: 5.1)
        rig.answer("gotify", .refused("HTTP 401"))
        #expect(rig.raised.count == 1, "one alert per episode")
        rig.advance(by: 10.1)
        #expect(rig.closed == 0)
        rig.answer("gotify")
        #expect(rig.closed == 1, "closed once the target takes the alerts")
    }

    @Test func onlyARefusalRaisesTheAlertNotATargetThatIsDownOrBusy() throws {
        let rig = try LaneRig()
        rig.raise("logged out")
        rig.answer("ntfy", .retry("Failed to connect"))
        rig.answer("gotify", .retry("HTTP 429"))
        rig.advance(by: 5.1)
        rig.answer("ntfy", .retry("HTTP 503"))
        #expect(rig.raised.isEmpty && rig.closed == 0)
    }

    @Test func anAlertATargetRefusesForGoodDoesNotHoldUpTheNext() throws {
        let rig = try LaneRig(["ntfy"])
        rig.raise("too long")
        rig.raise("next")
        rig.answer("ntfy", .refusedForGood("HTTP 413: payload too large"))
        #expect(rig.postCount("ntfy") == 2, "the next alert goes at once, without back-off")
        #expect(rig.refused == [1] && rig.raised.count == 1, "marked refused, the user told")
        #expect(rig.logged.contains { $0.contains("refused an alert (HTTP 413: payload too large); it is not sent there again") })
        rig.answer("ntfy")
        rig.advance(by: 3600)
        #expect(rig.postCount("ntfy") == 2, "the refused one is not sent again")
    }

    @Test func quietHoursHoldALaneUntilTheyEndThenWhatWaitedGoesAsOneDigest() throws {
        let quiet = QuietRule(hours: try #require(QuietHours("03:00-04:00")))
        let rig = try LaneRig(["ntfy"], quiet: quiet)
        rig.now = 1_780_000_000 - 1_780_000_000.truncatingRemainder(dividingBy: 86_400) + 3 * 3600 + 1800  // 03:30 UTC
        rig.raise("one", urgency: .normal)
        rig.raise("two", urgency: .normal)
        #expect(rig.postCount("ntfy") == 0, "held in quiet hours")
        #expect(rig.armed.last.map { $0.after == .seconds(1800) + .milliseconds(50) } == true, "woken as they end: \(rig.armed)")
        rig.advance(by: 1800.1)
        #expect(rig.postCount("ntfy") == 1 && rig.posts.last?.message.title.contains("2") == true, "one digest: \(rig.posts.map(\.message.title))")
        #expect(rig.forwarder.hold(of: rig.name("ntfy"), waiting: rig.outbox[rig.name("ntfy")] ?? [], sent: [], now: rig.now, utcOffset: 0).held == "")
    }
}
