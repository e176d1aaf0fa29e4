@testable import CCRelayCore
import CoreVocabulary
import Testing

/// When outside access is checked, and what a check leads to (issue 25): pure, on a virtual clock.
@Suite struct OutsideAccessTests {
    static let start = Instant(sinceBoot: .seconds(1000))
    static func report(_ v4: OutsideVerdict, _ v6: OutsideVerdict = .limited) -> OutsideReport {
        OutsideReport(ipv4: FamilyCheck(verdict: v4, answers: ["a: \(v4)"]), ipv6: FamilyCheck(verdict: v6, answers: ["a: \(v6)"]))
    }

    @Test func anEmpty204IsOkAPageOrARedirectAPortalAnythingElseLimited() {
        #expect(ProbeAnswer.classify(status: 204, bodyBytes: 0) == .ok)
        #expect(ProbeAnswer.classify(status: 204, bodyBytes: 12) == .portal("HTTP 204 with a page"))
        #expect(ProbeAnswer.classify(status: 200, bodyBytes: 3000) == .portal("HTTP 200 with a page"))
        #expect(ProbeAnswer.classify(status: 302, bodyBytes: 0) == .portal("redirect (HTTP 302)"))
        #expect(ProbeAnswer.classify(status: 503, bodyBytes: 0) == .failed("status 503"))
        #expect(FamilyCheck([("a", .failed("timeout")), ("b", .ok)]).verdict == .ok)
        #expect(FamilyCheck([("a", .failed("dns")), ("b", .portal("redirect (HTTP 302)"))]).verdict == .portal)
        #expect(FamilyCheck([("a", .failed("dns")), ("b", .failed("timeout"))]) == FamilyCheck(verdict: .limited, answers: ["a: dns", "b: timeout"]))
        #expect(FamilyCheck([]).verdict == .limited)
    }

    @Test func checksRunOnEachWayIntoOnlineAndOnTheFallbackNeverMore() {
        var outside = OutsideAccess(enabled: true)
        #expect(outside.sessionChanged(online: true, at: Self.start) == [.cancelTimer, .check])
        #expect(outside.sessionChanged(online: true, at: Self.start).isEmpty, "still online: nothing new")
        #expect(outside.checked(Self.report(.ok), at: Self.start) == [.arm(Self.start + OutsideAccess.fallback)])
        #expect(outside.ipv4 == .ok && outside.ipv6 == .limited && outside.checkedAt == Self.start)
        // An hour of quiet keep-alives: only the fallback's checks (3 in an hour).
        var checks = 0
        var due = Self.start + OutsideAccess.fallback
        while due <= Self.start + .seconds(3600) {
            let effects = outside.timerFired(at: due)
            checks += effects.filter { $0 == .check }.count
            let next = outside.checked(Self.report(.ok), at: due)
            guard case .arm(let at)? = next.last else { break }
            due = at
        }
        #expect(checks == 3)
        // Out of online: nothing checked, the verdicts unknown; back: a check at once.
        #expect(outside.sessionChanged(online: false, at: due) == [.cancelTimer])
        #expect(outside.ipv4 == .unknown && outside.checkedAt == nil)
        #expect(outside.timerFired(at: due).isEmpty, "a stale timer checks nothing")
        #expect(outside.sessionChanged(online: true, at: due) == [.cancelTimer, .check])
    }

    @Test func twoFailedChecksInARowRaiseOneAlertForTheEpisodeClosedByAnOkOne() {
        var outside = OutsideAccess(enabled: true)
        var now = Self.start
        _ = outside.sessionChanged(online: true, at: now)
        #expect(outside.checked(Self.report(.portal), at: now) == [.arm(now + OutsideAccess.confirmAfter)], "one failure: confirmed a minute later")
        now = now + OutsideAccess.confirmAfter
        #expect(outside.timerFired(at: now) == [.cancelTimer, .check])
        let second = outside.checked(Self.report(.portal), at: now)
        #expect(second.first == .post(.noOutsideAccess(portal: true)))
        #expect(second.last == .arm(now + OutsideAccess.fallback))
        now = now + OutsideAccess.fallback
        _ = outside.timerFired(at: now)
        #expect(!outside.checked(Self.report(.limited), at: now).contains { if case .post = $0 { true } else { false } }, "once per episode")
        now = now + OutsideAccess.fallback
        _ = outside.timerFired(at: now)
        #expect(outside.checked(Self.report(.limited, .ok), at: now) == [.close(.noOutsideAccess), .arm(now + OutsideAccess.fallback)],
                "IPv6 alone gets out: the way out is there")
    }

    @Test func aReportForASessionThatLeftOnlineAndProbesTurnedOffChangeNothing() {
        var outside = OutsideAccess(enabled: true)
        _ = outside.sessionChanged(online: true, at: Self.start)
        _ = outside.sessionChanged(online: false, at: Self.start)
        #expect(outside.checked(Self.report(.portal), at: Self.start).isEmpty)
        #expect(outside.ipv4 == .unknown)
        var off = OutsideAccess(enabled: false)
        #expect(off.sessionChanged(online: true, at: Self.start).isEmpty)
        #expect(off.ipv4 == .off && off.ipv6 == .off)
    }

    @Test func networkManagersVerdictCallsForACheckWhenItChangesAndNamesAPortalTheProbeSawBlocked() {
        var outside = OutsideAccess(enabled: true)
        var now = Self.start
        #expect(outside.networkManagerSaid(.full, at: now).isEmpty, "not online: nothing to check")
        _ = outside.sessionChanged(online: true, at: now)
        #expect(outside.networkManagerSaid(.portal, at: now).isEmpty, "a check runs already")
        _ = outside.checked(Self.report(.limited), at: now)
        #expect(outside.ipv4 == .portal, "NetworkManager saw the portal the probe's endpoints did not reach")
        #expect(outside.answers.last == "NetworkManager: portal")
        now = now + .seconds(5)
        #expect(outside.networkManagerSaid(.portal, at: now).isEmpty, "the same word again is no news")
        #expect(outside.networkManagerSaid(.full, at: now) == [.cancelTimer, .check], "a change while online: check now")
        _ = outside.checked(Self.report(.ok), at: now)
        #expect(outside.ipv4 == .ok && outside.answers.last == "NetworkManager: full")
        #expect(outside.networkManagerSaid(.unknown, at: now).isEmpty, "NetworkManager not checking says nothing of the way out")
        _ = outside.networkManagerSaid(.limited, at: now)
        _ = outside.checked(Self.report(.ok), at: now)
        #expect(outside.ipv4 == .ok, "the probe got out: NetworkManager's endpoints abroad may not")
        var fresh = OutsideAccess(enabled: true)
        _ = fresh.sessionChanged(online: true, at: now)
        _ = fresh.checked(Self.report(.ok), at: now)
        #expect(fresh.networkManagerSaid(.full, at: now).isEmpty, "its first word, full, changes nothing")
        var off = OutsideAccess(enabled: false)
        _ = off.sessionChanged(online: true, at: now)
        #expect(off.networkManagerSaid(.portal, at: now).isEmpty, "[probe] mode = off: no checks at all")
    }
}
