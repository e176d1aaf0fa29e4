@testable import CCRelayCore
import CoreVocabulary
import Testing

/// Quiet hours for bubbles, in the core (issue 34.2): the one `QuietRule` the
/// forwarding lanes follow too, on the wall clock given with each event
/// (moved down from the shell's DaemonShellTests).
@Suite struct DaemonCoreQuietTests {
    /// 03:30 UTC on some day.
    static let halfPastThree = WallTime(seconds: 1_780_000_000 - 1_780_000_000.truncatingRemainder(dividingBy: 86_400) + 3.5 * 3600, utcOffset: 0)

    static func rig(quietCritical: Bool) throws -> CoreRig {
        var configuration = CoreRig.configuration
        configuration.quietHours = QuietHours("03:00-04:00")
        configuration.quietCritical = quietCritical
        var rig = CoreRig(.usable(configuration))
        rig.wall = halfPastThree
        rig.start()
        return rig
    }

    @Test(arguments: [false, true])
    func quietHoursKeepBubblesDownButALogout(quietCritical: Bool) throws {
        var rig = try Self.rig(quietCritical: quietCritical)
        rig.send(.loginAnswered(LoginResult(
            grant: .init(token: String(repeating: "t", count: 32), ip: "10.1.2.3", location: .none), problem: nil, droppedNotices: 0,
            answer: .loggedIn(interval: 60, timeout: 180, notices: [NoticeInfo(id: "n-1", title: "通知", body: "正文", urgency: .normal)]))))
        #expect(rig.shown.isEmpty, "\(rig.shown)")
        #expect(rig.recorded.contains { $0.kind == .notice }, "journaled")
        #expect(rig.logged.contains("quiet hours: notice is in the journal and the tray, not shown"))
        rig.advance(.seconds(60))
        rig.send(.keepAliveAnswered(KeepAliveResult(
            problem: ProblemReport(code: .loggedOut, sentence: "kicked"), droppedNotices: 0, locationRejected: nil,
            answer: .loggedOut(reason: .kicked, message: nil))))
        #expect(rig.shown.map(\.kind) == (quietCritical ? [] : [.loggedOut]), "\(rig.shown)")
        rig.send(.user(.showStatus(setupCommand: false)))
        #expect(rig.shown.last?.kind == .status, "the status bubble, asked for, always shows")
    }

    @Test func afterQuietHoursANoticePopsUp() throws {
        var rig = try Self.rig(quietCritical: false)
        rig.wall?.seconds += 3600
        rig.send(.loginAnswered(LoginResult(
            grant: .init(token: String(repeating: "t", count: 32), ip: "10.1.2.3", location: .none), problem: nil, droppedNotices: 0,
            answer: .loggedIn(interval: 60, timeout: 180, notices: [NoticeInfo(id: "n-1", title: "通知", body: "正文", urgency: .normal)]))))
        #expect(rig.shown.map(\.kind) == [.notice])
    }
}
