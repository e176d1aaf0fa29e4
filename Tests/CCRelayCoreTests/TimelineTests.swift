@testable import CCRelayCore
import CoreVocabulary
import Testing

/// The timeline (issue 25): every change of state is recorded with its cause,
/// and the summary's numbers are right over a scripted day.
@Suite struct TimelineTests {
    static func entry(_ at: Double, _ from: DaemonState, _ to: DaemonState, _ cause: String) -> TimelineEntry {
        TimelineEntry(at: at, subject: .state, from: from.rawValue, to: to.rawValue, cause: cause)
    }

    @Test func aScriptedDaySummarizes() {
        let hour = 3600.0
        let day: [TimelineEntry] = [
            Self.entry(0, .offline, .loggingIn, "the daemon started"),
            Self.entry(10, .loggingIn, .online, "login: granted"),
            Self.entry(6 * hour, .online, .loggedOut, "the server ended the session (kicked)"),
            Self.entry(6 * hour + 60, .loggedOut, .loggingIn, "the user asked to log in"),
            Self.entry(6 * hour + 70, .loggingIn, .online, "login: granted"),
            Self.entry(12 * hour, .online, .noNetwork, "the network went down"),
            Self.entry(13 * hour, .noNetwork, .online, "the network came back"),
            Self.entry(20 * hour, .online, .sleeping, "the machine went to sleep"),
            Self.entry(22 * hour, .sleeping, .online, "the machine woke up"),
            TimelineEntry(at: 22 * hour + 5, subject: .outside, from: "ok", to: "portal", cause: "an outside-access check (a: redirect)"),
        ]
        let summary = TimelineSummary(day, since: 0, now: 24 * hour)
        let online = (6 * hour - 10) + (6 * hour - 6 * hour - 70 + 6 * hour) + (7 * hour) + (2 * hour)
        #expect(abs((summary.onlineShare ?? 0) - online / (24 * hour)) < 1e-9, "\(String(describing: summary.onlineShare))")
        #expect(summary.drops.map(\.count).reduce(0, +) == 3)
        #expect(Set(summary.drops.map(\.cause)) == ["the server ended the session (kicked)", "the network went down", "the machine went to sleep"])
        // A window opening mid-day starts from the state entered before it.
        let evening = TimelineSummary(day, since: 19 * hour, now: 24 * hour)
        #expect(abs((evening.onlineShare ?? 0) - 3.0 / 5.0) < 1e-9)
        #expect(TimelineSummary([], since: 0, now: 10).onlineShare == nil)
        #expect(summary.recorded == 24 * hour && evening.recorded == 5 * hour, "the whole window is on record")
        // Records younger than the window: the share is of the 43 s they tell, and says so.
        let young = TimelineSummary([Self.entry(7 * 86_400 - 43, .offline, .loggingIn, "the daemon started"),
                                     Self.entry(7 * 86_400 - 30, .loggingIn, .online, "login: granted")],
                                    since: 0, now: 7 * 86_400)
        #expect(young.recorded == 43 && abs((young.onlineShare ?? 0) - 30.0 / 43.0) < 1e-9)
    }

    @Test func eachStateChangeIsRecordedWithWhatCausedIt() {
        var rig = CoreRig()
        rig.start()
        rig.loggedIn()
        rig.advance(.seconds(60))
        rig.send(.keepAliveAnswered(KeepAliveResult(
            problem: ProblemReport(code: .loggedOut, sentence: "kicked"), droppedNotices: 0, locationRejected: nil,
            answer: .loggedOut(reason: .kicked, message: nil))))
        rig.send(.user(.login))
        rig.loggedIn()
        rig.send(.network(online: false, why: "the network went down: wlan0's link went down (netlink)"))
        rig.send(.system(.sleeping))
        let recorded = rig.effects.compactMap { if case .timeline(let entry) = $0 { entry } else { nil } }
        let changes = recorded.map { "\($0.from)→\($0.to): \($0.cause)" }
        #expect(changes == [
            "offline→logging-in: the daemon started", "logging-in→online: login: granted",
            "online→logged-out: the server ended the session (kicked)", "logged-out→logging-in: the user asked to log in",
            "logging-in→online: login: granted", "online→no-network: the network went down: wlan0's link went down (netlink)",
            "no-network→sleeping: the machine went to sleep",
        ], "\(changes)")
        // Outside access too, when its verdict changes (but for the ordinary arrival at ok).
        var fresh = CoreRig()
        fresh.start()
        fresh.loggedIn()
        fresh.send(.outsideChecked(OutsideReport(ipv4: FamilyCheck(verdict: .portal, answers: ["a: redirect (HTTP 302)"]), ipv6: FamilyCheck(verdict: .limited, answers: []))))
        let outside = fresh.effects.compactMap { if case .timeline(let entry) = $0, entry.subject == .outside { entry } else { nil } }
        #expect(outside.map { "\($0.from)→\($0.to)" } == ["unknown→portal"], "\(outside)")
        #expect(outside.first?.cause == "an outside-access check (IPv4 a: redirect (HTTP 302))")
    }
}
