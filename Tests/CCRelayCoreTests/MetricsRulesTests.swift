import CoreVocabulary
@testable import CCRelayCore
import Testing

/// The metrics' rules (issue 36): the cause labels of the drops, read from
/// what the timeline says (every cause the daemon writes has its label);
/// the tally that survives restarts; when the textfile is written; the `[metrics] textfile` key.
@Suite struct MetricsRulesTests {
    static func keepAlive(_ answer: KeepAliveAnswer, problem: ProblemCode? = nil) -> DaemonEvent {
        .keepAliveAnswered(KeepAliveResult(
            problem: problem.map { ProblemReport(code: $0, sentence: "") }, droppedNotices: 0, locationRejected: nil, answer: answer))
    }

    /// What the daemon's timeline writes for the events that end an online stretch, and the label each gets.
    @Test(arguments: [
        (keepAlive(.loggedOut(reason: .kicked, message: "下线")), DropCause.kicked),
        (keepAlive(.loggedOut(reason: .admin, message: nil)), .admin),
        (keepAlive(.loggedOut(reason: .quotaExhausted, message: nil)), .quotaExhausted),
        (keepAlive(.loggedOut(reason: .onlineElsewhere, message: nil)), .onlineElsewhere),
        (keepAlive(.loggedOut(reason: .expired, message: nil)), .expired),
        (keepAlive(.loggedOut(reason: .portalEnded, message: nil)), .portalEnded),
        (keepAlive(.loggedOut(reason: .other("maintenance (10.0.0.1)"), message: nil)), .endedByServer),
        (keepAlive(.refused(.certificateRejected, message: nil), problem: .certificateRefused), .refused),
        (keepAlive(.rateLimited(retryAfter: 30)), .rateLimited),
        (keepAlive(.transientFailure("could not connect to 10.1.2.3:443")), .keepaliveFailed),
        (keepAlive(.noNetwork), .noNetwork),
        (keepAlive(.untrusted(.unknownIssuer)), .untrusted),
        (DaemonEvent.system(.connectivity(online: false)), .noNetwork),
        (DaemonEvent.network(online: false, why: "the network went down: wlan0's link is down (netlink)"), .noNetwork),
        (DaemonEvent.networkConnectivity(.portal), .noNetwork),
        (DaemonEvent.system(.sleeping), .sleep),
        (DaemonEvent.user(.logout), .userLogout),
        (DaemonEvent.bubble(.clicked(.status, action: "logout")), .userLogout),
        (DaemonEvent.stop, .daemonStopped),
        (DaemonEvent.timerFired(.session, sleptSinceBoot: .zero), .deadline),
    ])
    func everyCauseOfADropHasItsLabel(_ event: DaemonEvent, _ label: DropCause) {
        #expect(DropCause(timelineCause: TimelineCause.of(event)) == label, "\(TimelineCause.of(event))")
    }

    @Test func causesNoLabelKnowsAreOtherAndLabelsNeverCarryTheirText() {
        #expect(DropCause(timelineCause: "something new in version 9 for user 20231234") == .other)
        #expect(DropCause(timelineCause: "the server ended the session (") == .other)
        #expect(DropCause.allCases.allSatisfy { $0.rawValue.allSatisfy { $0.isLowercase || $0 == "-" } })
    }

    @Test func theTallyStartsFromTheTimelineAndCountsOnlyDropsOutOfOnline() {
        var tally = DropTally(causes: [
            "the server ended the session (kicked)": 2, "keep-alive failed: timed out": 1, "keep-alive failed: reset by 10.0.0.1": 2,
        ])
        #expect(tally.counts == ["kicked": 2, "keepalive-failed": 3])
        tally.record(TimelineEntry(at: 1, subject: .state, from: "online", to: "logged-out", cause: "the server ended the session (kicked)"))
        tally.record(TimelineEntry(at: 2, subject: .state, from: "logging-in", to: "online", cause: "login: granted"))
        tally.record(TimelineEntry(at: 3, subject: .outside, from: "ok", to: "limited", cause: "the server ended the session (kicked)"))
        tally.record(TimelineEntry(at: 4, subject: .state, from: "online", to: "online", cause: "the daemon"))
        #expect(tally.counts == ["kicked": 3, "keepalive-failed": 3])
    }

    // MARK: When the textfile is written

    static let start = Instant(sinceBoot: .seconds(1000))

    @Test func aChangeOfStateIsWrittenAtOnceAndCountersAtMostOnceAMinute() {
        var policy = MetricsWritePolicy()
        var facts = MetricsTextTests.online
        #expect(policy.shouldWrite(facts, at: Self.start), "the first publication writes")
        #expect(policy.countersDue(at: Self.start))
        policy.attempted(facts, at: Self.start, succeeded: true)
        #expect(!policy.countersDue(at: Self.start + .seconds(59)) && policy.countersDue(at: Self.start + .seconds(60)))
        #expect(!policy.shouldWrite(facts, at: Self.start + .seconds(600)), "nothing changed: nothing written, however long")
        // A keep-alive moves the session's expiry: not before a minute has passed since the last write.
        facts.sessionExpires! += 2
        #expect(!policy.shouldWrite(facts, at: Self.start + .seconds(2)))
        #expect(!policy.shouldWrite(facts, at: Self.start + .seconds(59)))
        #expect(policy.shouldWrite(facts, at: Self.start + .seconds(60)))
        facts.drops = ["kicked": 3]
        #expect(!policy.shouldWrite(facts, at: Self.start + .seconds(30)), "the counters alone wait too")
        // The state (or any steady fact) changes: at once.
        for change: (inout MetricsFacts) -> Void in [{ $0.state = "logged-out" }, { $0.alertsUnread += 1 }, { $0.outside = "portal" },
                                                      { $0.forwarding[0].queued += 1 }, { $0.certificateExpiry = 1 }] {
            var changed = facts
            change(&changed)
            #expect(policy.shouldWrite(changed, at: Self.start + .seconds(1)))
        }
    }

    @Test func theAccountsTrafficWaitsAsCountersDoAndANewDeviceDoesNot() {
        var policy = MetricsWritePolicy()
        var facts = MetricsTextTests.online
        facts.account = AccountFacts(devices: 1, usedBytes: 10, usedSeconds: 5, remainBytes: 90, balance: 3)
        policy.attempted(facts, at: Self.start, succeeded: true)
        var used = facts
        used.account = AccountFacts(devices: 1, usedBytes: 20, usedSeconds: 15, remainBytes: 80, balance: 2.5)
        #expect(!policy.shouldWrite(used, at: Self.start + .seconds(10)), "a Srun check moves the traffic: it waits as counters do")
        #expect(policy.shouldWrite(used, at: Self.start + .seconds(60)))
        used.account?.devices = 2
        #expect(policy.shouldWrite(used, at: Self.start + .seconds(10)), "a new device on the account is written at once")
    }

    @Test func aFailedWriteIsTriedAgainAMinuteLaterNotAtEveryPublication() {
        var policy = MetricsWritePolicy()
        let facts = MetricsTextTests.online
        policy.attempted(facts, at: Self.start, succeeded: false)
        #expect(!policy.shouldWrite(facts, at: Self.start + .seconds(2)), "no retry at each keep-alive")
        #expect(policy.shouldWrite(facts, at: Self.start + .seconds(60)))
        var changed = facts
        changed.state = "failing"
        #expect(policy.shouldWrite(changed, at: Self.start + .seconds(1)), "a change of state is tried at once")
        policy.reset()
        #expect(policy.shouldWrite(facts, at: Self.start + .seconds(1)))
    }

    // MARK: [metrics] textfile

    func parse(_ value: String) -> ConfigurationParser.Result {
        ConfigurationParser.parse("[server]\nurl = https://cc.campus.example/\n[metrics]\ntextfile = \(value)\n", file: "/etc/ccrelay/ccrelay.conf", home: "/home/s", localize: .english)
    }

    @Test func theTextfileIsAnAbsolutePromFile() {
        #expect(parse("/var/lib/prometheus/node-exporter/ccrelay.prom").configuration?.metricsTextfile == "/var/lib/prometheus/node-exporter/ccrelay.prom")
        #expect(parse("~/metrics/ccrelay-lab.prom").configuration?.metricsTextfile == "/home/s/metrics/ccrelay-lab.prom")
        #expect(ConfigurationParser.parse("[server]\nurl = https://cc.campus.example/\n", file: "f", home: "/h", localize: .english).configuration?.metricsTextfile == nil,
                "off by default")
        for bad in ["ccrelay.prom", "/var/lib/prometheus/node-exporter/", "/var/lib/prometheus/node-exporter/ccrelay.txt",
                    "/var/lib/prometheus/node-exporter/.prom", "/var/lib/prometheus/node-exporter/.hidden.prom", "/" + String(repeating: "a", count: 2000) + ".prom"] {
            let result = parse(bad)
            #expect(result.configuration == nil, "\(bad)")
            #expect(result.errors.first?.line == 4)
            #expect(result.errors.first?.message.contains("textfile must be the absolute path of a file whose name ends in .prom") == true)
        }
    }
}
