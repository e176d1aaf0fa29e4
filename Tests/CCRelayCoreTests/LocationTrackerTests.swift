import CCRelayCore
import CoreVocabulary
import Testing

/// The daemon's location rules on their own, as `Session` is tested: a
/// source only while fixes are needed, fixes until three silent intervals,
/// a source with a problem asked again with each keep-alive, and 428s.
@Suite struct LocationTrackerTests {
    typealias Tracker = LocationTracker<String>
    let minute = Duration.seconds(60)
    let t0 = Instant(sinceBoot: .seconds(1_000))

    @Test func aSourceRunsOnlyWhileFixesAreNeeded() {
        var auto = Tracker(mode: .auto)
        #expect(auto.start().isEmpty, "auto: nothing until the server asks")
        #expect(auto.serverAsks(.optional) == [.startSource])
        #expect(auto.serverAsks(.optional).isEmpty, "one source")
        _ = auto.reported(.fix("here"), at: t0)
        #expect(auto.serverAsks(.none) == [.stopSource])
        #expect(auto.fix == nil && auto.status == "off", "a stopped source's fix is forgotten")
        var always = Tracker(mode: .always)
        #expect(always.start() == [.startSource])
        var off = Tracker(mode: .off)
        #expect(off.start().isEmpty && off.serverAsks(.required).isEmpty)
    }

    @Test func theNewestFixGoesOutUntilTheSourceIsSilentForThreeIntervals() {
        var tracker = Tracker(mode: .always)
        _ = tracker.start()
        #expect(tracker.keepAliveGoesOut(at: t0, interval: minute).fix == nil)
        #expect(tracker.status == "waiting")
        _ = tracker.reported(.fix("a"), at: t0)
        _ = tracker.reported(.fix("b"), at: t0 + .seconds(5))
        #expect(tracker.fixToSend(at: t0 + .seconds(10), interval: minute) == "b")
        #expect(tracker.status == "ok")
        // The source stops confirming it (a problem): the fix still goes for three intervals.
        _ = tracker.reported(.problem(.off(.unavailable)), at: t0 + .seconds(10))
        #expect(tracker.fixToSend(at: t0 + .seconds(10) + minute * 3, interval: minute) == "b")
        #expect(tracker.fixToSend(at: t0 + .seconds(11) + minute * 3, interval: minute) == nil)
    }

    @Test func aSourceWithAProblemIsAskedAgainWithEachKeepAliveAndRecoveryClosesTheAlert() {
        var tracker = Tracker(mode: .always)
        _ = tracker.start()
        #expect(tracker.reported(.problem(.denied(.byUser)), at: t0) == [.alert(.post(.locationDenied(.byUser)))])
        #expect(tracker.status == "denied")
        let (_, effects) = tracker.keepAliveGoesOut(at: t0 + minute, interval: minute)
        #expect(effects == [.stopSource, .startSource], "started again: permission may have been given back")
        #expect(tracker.reported(.fix("ok"), at: t0 + minute) == [.alert(.close(.locationDenied))])
        #expect(tracker.keepAliveGoesOut(at: t0 + minute * 2, interval: minute).effects.isEmpty, "no restart without a problem")
    }

    @Test func anApproximateOnlyGrantOutlastsTheFixesThatArrive() {
        var tracker = Tracker(mode: .always)
        _ = tracker.start()
        #expect(tracker.reported(.approximateOnly(true), at: t0) == [.alert(.post(.locationTooCoarse(.approximate)))])
        #expect(tracker.reported(.fix("coarse"), at: t0).isEmpty, "a fix does not clear it")
        #expect(tracker.reported(.approximateOnly(false), at: t0) == [.alert(.close(.locationTooCoarse))])
    }

    @Test func a428MakesLocationRequiredAndTwoTheSourceCouldNotAnswerRaiseTheAlert() {
        var tracker = Tracker(mode: .auto)
        _ = tracker.start()
        #expect(tracker.keepAliveAnswered(rejected: true) == [.startSource], "a source to get a fix for the retry")
        #expect(tracker.need.server == .required)
        #expect(tracker.keepAliveAnswered(rejected: true).isEmpty, "a source still starting gets the next retry")
        #expect(tracker.rejections == 0)
        // The source has had its say (a fix the campus did not take): now they count.
        _ = tracker.reported(.fix("far"), at: t0)
        #expect(tracker.keepAliveAnswered(rejected: true).isEmpty)
        #expect(tracker.keepAliveAnswered(rejected: true) == [.alert(.post(.locationTooCoarse(.stopped)))])
        #expect(tracker.keepAliveAnswered(rejected: false) == [.alert(.close(.locationTooCoarse))])
        #expect(tracker.rejections == 0)
        #expect(tracker.keepAliveAnswered(rejected: false).isEmpty)
    }

    @Test func aNewLoginResetsTheRejections() {
        var tracker = Tracker(mode: .auto)
        _ = tracker.serverAsks(.required)
        _ = tracker.reported(.fix("far"), at: t0)
        _ = tracker.keepAliveAnswered(rejected: true)
        #expect(tracker.rejections == 1)
        _ = tracker.serverAsks(.required)
        #expect(tracker.rejections == 0)
    }

    @Test func reportsOfAStoppedSourceAreIgnored() {
        var tracker = Tracker(mode: .always)
        _ = tracker.start()
        tracker.sourceStopped()
        #expect(tracker.reported(.problem(.off(.disabled)), at: t0).isEmpty)
        #expect(tracker.start() == [.startSource])
    }
}
