import DBus
import DBusAsync
import Foundation
import TestSupport
import Testing

/// The unread badge as a dock sees it (LauncherEntry `Update` on a real
/// private bus): alerts raise it, dismissing or clicking a bubble lowers it,
/// expiry does not, and `ccrelay badge clear` zeroes it with the daemon
/// running or stopped.
@Suite(.desktopBudget) struct BadgeTests {
    typealias Badge = LauncherEntryRecorder.Badge

    func history(_ rig: DaemonRig) throws -> [[String: Any]] {
        let result = try rig.cli(["history", "--json"])
        guard result.status == 0 else { throw TestSetupError("history: \(result.standardError)") }
        return try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [[String: Any]] ?? []
    }

    @Test func alertsRaiseTheBadgeDismissingLowersItAndBadgeClearZeroesIt() async throws {
        let recorder = LockedBox<LauncherEntryRecorder?>(nil)
        let rig = try await DaemonRig { bus in recorder.set(try LauncherEntryRecorder(on: bus)) }
        let dock = try #require(recorder.get())
        #expect(await eventually { dock.last == Badge(count: 0, visible: false, urgent: false) }, "announced at start: \(rig.log)")
        #expect(await eventually(timeout: .seconds(20)) { rig.log.contains("state: online") }, "\(rig.log)")

        try rig.sim.control("POST", "notice", ["id": "n-badge", "title": "网络维护通知", "body": "今晚维护"])
        #expect(await eventually(timeout: .seconds(20)) { dock.last == Badge(count: 1, visible: true, urgent: false) },
                "\(dock.updates.get())")
        try rig.sim.control("POST", "kick", ["message": "你已被管理员下线"])
        #expect(await eventually(timeout: .seconds(20)) { dock.last == Badge(count: 2, visible: true, urgent: true) },
                "a critical alert makes it urgent: \(dock.updates.get())")

        // The user closes one bubble in dunst: reason 2, acknowledged.
        #expect(await eventually { (try? rig.dunst.control(["count", "displayed"]).standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)) == "2" })
        #expect(try rig.dunst.control(["close"]).status == 0)
        #expect(await eventually { dock.last?.count == 1 }, "\(dock.updates.get())")
        let acknowledged = try history(rig).filter { $0["acknowledged"] as? Bool == true }
        #expect(acknowledged.count == 1, "one alert acknowledged by the dismissal")

        let cleared = try rig.cli(["badge", "clear"])
        #expect(cleared.status == 0)
        #expect(cleared.standardOutput.contains("1 alert acknowledged"), "\(cleared.standardOutput)")
        #expect(await eventually { dock.last == Badge(count: 0, visible: false, urgent: false) }, "\(dock.updates.get())")
        #expect(try history(rig).allSatisfy { $0["acknowledged"] as? Bool == true })

        // One more alert, then the daemon stops: the CLI clears the badge on disk,
        // and the next daemon announces 0 at start.
        let login = try rig.cli(["login"])
        #expect(login.status == 0, "\(login.standardError)")
        try rig.sim.control("POST", "kick")
        #expect(await eventually(timeout: .seconds(20)) { dock.last?.count == 1 }, "\(dock.updates.get())")
        kill(rig.daemon.pid, SIGTERM)
        #expect(rig.daemon.wait() == 0)
        let shown = try rig.cli(["badge", "--json"])
        #expect(shown.status == 0)
        let shownJSON = try JSONSerialization.jsonObject(with: Data(shown.standardOutput.utf8)) as? [String: Any]
        #expect(shownJSON?["count"] as? Int == 1 && shownJSON?["urgent"] as? Bool == true, "\(shown.standardOutput)")
        let offline = try rig.cli(["badge", "clear"])
        #expect(offline.status == 0, "\(offline.standardError)")
        #expect(offline.standardOutput.contains("1 alert acknowledged"))
        let before = dock.updates.get().count
        let again = try rig.startDaemon(logPath: rig.logPath + ".2")
        defer { again.stop() }
        #expect(await eventually { dock.updates.get().count > before }, "the new daemon announces the badge")
        #expect(dock.last == Badge(count: 0, visible: false, urgent: false))
    }

    @Test func aDockThatStartsLaterIsToldTheBadgeWhenItTakesItsName() async throws {
        let rig = try await DaemonRig()
        #expect(await eventually(timeout: .seconds(20)) { rig.log.contains("state: online") }, "\(rig.log)")
        try rig.sim.control("POST", "notice", ["id": "n-dock", "title": "网络维护通知", "body": "今晚维护"])
        func unread() -> Int? {
            guard let shown = try? rig.cli(["badge", "--json"]), shown.status == 0 else { return nil }
            return (try? JSONSerialization.jsonObject(with: Data(shown.standardOutput.utf8)) as? [String: Any])?["count"] as? Int
        }
        #expect(await eventually(timeout: .seconds(20)) { unread() == 1 })
        // The dock starts now, listens, and takes its name: as Plank does, it never asks.
        let dock = try LauncherEntryRecorder(on: rig.bus)
        let owner = try rig.bus.connect(label: "plank")
        defer { owner.loop.sync { owner.close() } }
        #expect(dock.updates.get().isEmpty)
        #expect(try await owner.requestName("com.canonical.Unity") == .primaryOwner)
        #expect(await eventually { dock.last == Badge(count: 1, visible: true, urgent: false) }, "\(dock.updates.get())")
    }

    @Test func clickingAcknowledgesReloginLogsInAndExpiryLeavesTheAlertUnread() async throws {
        let recorder = LockedBox<LauncherEntryRecorder?>(nil)
        let server = LockedBox<MockNotificationServer?>(nil)
        let rig = try await DaemonRig(withDunst: false) { bus in
            server.set(try await MockNotificationServer(on: bus, capabilities: ["actions", "body"]))
            recorder.set(try LauncherEntryRecorder(on: bus))
        }
        let dock = try #require(recorder.get())
        let notifications = try #require(server.get())
        #expect(await eventually(timeout: .seconds(20)) { rig.log.contains("state: online") }, "\(rig.log)")
        try rig.sim.control("POST", "kick")
        #expect(await eventually(timeout: .seconds(20)) { dock.last?.count == 1 }, "\(rig.log)")
        func notificationID(_ kind: String) throws -> UInt32? {
            try history(rig).first { $0["kind"] as? String == kind }?["notification_id"] as? UInt32
        }
        #expect(await eventually { (try? notificationID("logged-out")) != nil }, "the journal learns the bubble's id")
        let logoutID = try #require(try notificationID("logged-out"))

        // "Log in again" acknowledges the alert and logs in.
        try await notifications.emit("ActionInvoked", signature: "us", [.uint32(logoutID), .string("relogin")])
        #expect(await eventually { dock.last?.count == 0 }, "\(dock.updates.get())")
        #expect(await eventually(timeout: .seconds(20)) { (try? rig.sim.sessions().count) == 2 }, "relogin: \(rig.log)")

        // A notice whose bubble expires stays unread; clicking the next notice's
        // bubble (the same slot) acknowledges both.
        try rig.sim.control("POST", "notice", ["id": "n-expire", "title": "选课通知", "body": "明天开始"])
        #expect(await eventually(timeout: .seconds(20)) { (try? notificationID("notice")) != nil }, "\(rig.log)")
        let expiringID = try #require(try notificationID("notice"))
        #expect(dock.last?.count == 1)
        try await notifications.emit("NotificationClosed", signature: "uu", [.uint32(expiringID), .uint32(1)])
        let afterExpiry = try rig.cli(["badge", "--json"])
        #expect(afterExpiry.standardOutput.contains(#""count":1"#), "expiry does not acknowledge: \(afterExpiry.standardOutput)")
        try rig.sim.control("POST", "notice", ["id": "n-click", "title": "缴费通知", "body": "月底前"])
        #expect(await eventually(timeout: .seconds(20)) { dock.last?.count == 2 }, "\(dock.updates.get())")
        #expect(await eventually { (try? notificationID("notice")).flatMap { $0 } != expiringID })
        let clickID = try #require(try notificationID("notice"))
        try await notifications.emit("ActionInvoked", signature: "us", [.uint32(clickID), .string("default")])
        #expect(await eventually { dock.last?.count == 0 }, "\(dock.updates.get())")
        #expect(try history(rig).filter { $0["kind"] as? String == "notice" }.allSatisfy { $0["acknowledged"] as? Bool == true })
    }

    /// issue 20: with the journal unusable, `history` said "No alerts yet." and
    /// `badge clear` "No unread alerts."; both name the problem now, and fail.
    @Test func withTheJournalUnusableHistoryAndBadgeClearSaySoInsteadOfNothing() async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-nojournal-\(UUID().uuidString)").path
        // A folder where the file belongs: the journal cannot be opened.
        try FileManager.default.createDirectory(atPath: state + "/ccrelay/alerts.db", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: state) }
        let rig = try await DaemonRig(extraEnvironment: ["XDG_STATE_HOME": state])
        #expect(await eventually(timeout: .seconds(20)) { rig.log.contains("state: online") }, "\(rig.log)")
        let history = try rig.cli(["history"])
        #expect(history.status == 1 && history.standardError.contains("alert journal cannot be used"), "\(history)")
        #expect(!history.standardOutput.contains("No alerts yet"))
        let clear = try rig.cli(["badge", "clear"])
        #expect(clear.status == 1 && clear.standardError.contains("alert journal cannot be used"), "\(clear)")
    }
}
