@testable import CCProtocol
@testable import DaemonShell
import AlertJournal
import DesktopServices
import EventLoop
import CCRelayCore
import CoreVocabulary
import Testing
import TestSupport

/// The daemon shell's rules on the embedded loop (`DaemonHarness`): what
/// reaches the journal, the desktop and the saved session, driven by a
/// scripted server and virtual time — no process spawned, no wait.
@Suite(.desktopBudget) struct DaemonShellTests {
    @Test func keepAlivesGoOutEveryIntervalOnTheLoopsClock() throws {
        let rig = try DaemonHarness()
        #expect(rig.server.pending == .login(user: nil, password: nil))
        rig.server.answer(ScriptedServer.loggedIn(interval: 60, timeout: 180))
        rig.loop.runPending()
        #expect(rig.daemon.status().state == "online")
        for seq in 1...3 {
            rig.loop.advance(by: .seconds(59))
            #expect(rig.server.pending == nil, "not before the interval")
            rig.loop.advance(by: .seconds(1))
            #expect(rig.server.pending == .keepAlive(seq: UInt64(seq)))
            rig.server.answer(ScriptedServer.accepted())
            rig.loop.runPending()
        }
        #expect(rig.daemon.status().remaining == 180)
    }

    @Test func theSessionRowIsWrittenWhenItChangesNotWithEveryKeepAlive() throws {
        let rig = try DaemonHarness()
        rig.server.answer(ScriptedServer.loggedIn(interval: 60, timeout: 180))
        let saved = try #require(try rig.store().savedSession())
        #expect(saved.seq == 0 && saved.interval == 60)
        for _ in 1...3 {
            rig.loop.advance(by: .seconds(60))
            rig.server.answer(ScriptedServer.accepted())
        }
        #expect(try rig.store().savedSession() == saved, "three keep-alives, no write")
        rig.loop.advance(by: .seconds(60))
        rig.server.answer(ScriptedServer.accepted(interval: 30))
        let changed = try #require(try rig.store().savedSession())
        #expect(changed.interval == 30 && changed.seq == 4, "a new interval is a change")
        var stopped = false
        rig.daemon.stop { stopped = true }
        rig.loop.runPending()
        #expect(stopped)
        #expect(try rig.store().savedSession()?.seq == 4)
    }

    @Test func aSessionTheServerEndedIsForgottenAtOnce() throws {
        // Else a restart after kill -9 carries on with the dead token and raises the logout again.
        let rig = try DaemonHarness(config: "[keepalive]\nauto-relogin = false")
        rig.server.answer(ScriptedServer.loggedIn(interval: 60, timeout: 180))
        #expect(try rig.store().savedSession() != nil)
        rig.loop.advance(by: .seconds(60))
        rig.server.answer(.loggedOut(reason: "kicked", message: nil))
        rig.loop.runPending()
        #expect(rig.daemon.status().state == "logged-out")
        #expect(try rig.store().savedSession() == nil)
    }

    /// issue 23: one failing keep-alive built the status about four times
    /// (seven SELECTs with forwarding on); a kick is one publication now,
    /// carrying its state and its badge, and reading the status builds nothing.
    @Test func aKickIsPublishedOnceWithItsStateAndBadge() throws {
        let rig = try DaemonHarness(config: "[keepalive]\nauto-relogin = false")
        rig.server.answer(ScriptedServer.loggedIn(interval: 60, timeout: 180))
        rig.loop.runPending()
        rig.loop.advance(by: .seconds(60))
        let before = rig.desktop.published.count
        rig.server.answer(.loggedOut(reason: "kicked", message: nil))
        rig.loop.runPending()
        #expect(rig.desktop.published.count == before + 1, "\(rig.desktop.published.suffix(3).map(\.state))")
        let published = try #require(rig.desktop.published.last)
        #expect(published.state == .loggedOut && published.badge == BadgeState(count: 1, urgent: true))
        #expect(rig.desktop.announced.suffix(2) == [.state, .badge], "both properties announced, once")
        _ = rig.daemon.status()
        _ = try rig.desktop.target?.journal(limit: 5)
        #expect(rig.desktop.published.count == before + 1, "reading is not a change")
    }

    /// issue 25: a granted session whose traffic meets a portal stays online, and says so once.
    @Test func aPortalTwiceInARowIsOneAlertAndNeverALogout() throws {
        let rig = try DaemonHarness()
        rig.server.answer(ScriptedServer.loggedIn(interval: 60, timeout: 180))
        rig.loop.runPending()
        #expect(rig.probe.checks == 1, "checked at the login")
        rig.probe.answer(.portal)
        rig.loop.runPending()
        #expect(rig.daemon.status().outside == "portal" && rig.daemon.status().state == "online")
        #expect(!rig.desktop.posted.contains { $0.kind == .noOutsideAccess }, "one failed check is not an alert yet")
        rig.loop.advance(by: .seconds(60))
        rig.server.answer(ScriptedServer.accepted())
        #expect(rig.probe.checks == 2, "confirmed a minute later")
        rig.probe.answer(.portal)
        rig.loop.runPending()
        #expect(rig.desktop.posted.filter { $0.kind == .noOutsideAccess }.count == 1)
        #expect(rig.desktop.posted.last { $0.kind == .noOutsideAccess }?.body.contains("log in there") == true)
        #expect(try rig.store().alerts(limit: 10).filter { $0.kind == .noOutsideAccess }.count == 1)
        #expect(rig.daemon.status().state == "online" && rig.server.requests.filter { if case .login = $0 { true } else { false } }.count == 1,
                "no logout, no relogin")
        // Keep-alives for 20 minutes: no check per keep-alive; then the fallback finds the way out.
        for _ in 0..<20 {
            rig.loop.advance(by: .seconds(60))
            rig.server.answer(ScriptedServer.accepted())
        }
        #expect(rig.probe.checks == 3, "only the fallback's: \(rig.probe.checks)")
        rig.probe.answer(.ok)
        rig.loop.runPending()
        #expect(rig.desktop.closed.contains(.noOutsideAccess))
        #expect(rig.daemon.status().outside == "ok")
    }

    /// issue 25: each outside check asks NetworkManager's opinion too, and a
    /// change of NetworkManager's verdict while online checks again.
    @Test func eachCheckAsksNetworkManagerAndItsChangeChecksAgain() throws {
        let rig = try DaemonHarness()
        rig.server.answer(ScriptedServer.loggedIn(interval: 60, timeout: 180))
        rig.loop.runPending()
        #expect(rig.probe.checks == 1 && rig.system.connectivityChecksAsked == 1, "the login's check asks NetworkManager too")
        rig.probe.answer(.limited)
        rig.loop.runPending()
        rig.system.send(.networkConnectivity(.portal))
        rig.loop.runPending()
        #expect(rig.probe.checks == 2 && rig.system.connectivityChecksAsked == 2, "NetworkManager's new word: checked again")
        rig.probe.answer(.limited)
        rig.loop.runPending()
        #expect(rig.daemon.status().outside == "portal", "the portal NetworkManager found names the way out")
        rig.system.send(.networkConnectivity(.portal))
        rig.loop.runPending()
        #expect(rig.probe.checks == 2, "the same word: no check")
    }

    /// A wall-clock time today at `hour`:`minute` local time, near a fixed day (the loop's virtual wall clock starts there).
    static func localTime(_ hour: Int, _ minute: Int) -> Double {
        let day = 1_780_000_000.0
        let sinceMidnight = (Int(day) + WallClock.utcOffset(day)) % 86_400
        return day - Double(sinceMidnight) + Double(hour * 3600 + minute * 60)
    }

    /// Issue 34: after quiet hours (the wall clock moved past them) a
    /// notice pops up again — the loop's wall clock reaches the core's quiet
    /// rule (the rule itself: DaemonCoreQuietTests).
    @Test func aNoticeAfterQuietHoursPopsUp() throws {
        let rig = try DaemonHarness(config: "[alerts]\nquiet = 03:00-04:00", wallClock: Self.localTime(3, 58))
        rig.server.answer(ScriptedServer.loggedIn(notices: [Notice(id: "n-1", title: "通知一", body: "正文", urgency: "normal")]))
        rig.loop.runPending()
        #expect(rig.desktop.posted.isEmpty, "\(rig.desktop.posted)")
        rig.loop.setWallClock(Self.localTime(4, 1))
        rig.loop.advance(by: .seconds(60))
        rig.server.answer(ScriptedServer.accepted(notices: [Notice(id: "n-2", title: "通知二", body: "正文", urgency: "normal")]))
        rig.loop.runPending()
        #expect(rig.desktop.posted.map(\.title) == ["通知二"], "\(rig.desktop.posted)")
    }

    /// Issue 31.9: 250 notices in one reply are all journaled while the
    /// journal can be written (the in-memory cap is for a disk that cannot).
    @Test func aReplyOfMoreNoticesThanTheMemoryCapIsJournaledWhole() throws {
        let rig = try DaemonHarness()
        let notices = (1...250).map { Notice(id: "n-\($0)", title: "通知\($0)", body: "正文", urgency: "normal") }
        rig.server.answer(ScriptedServer.loggedIn(notices: notices))
        rig.loop.runPending()
        #expect(try rig.store().alerts(limit: 500).filter { $0.kind == .notice }.count == 250)
        #expect(!rig.logged.contains { $0.contains("more than ccrelay keeps in memory") }, "\(rig.logged)")
    }

    @Test func manyNoticesAreAllJournaledAndOnlyTheNewestIsShown() throws {
        let rig = try DaemonHarness()
        let notices = (1...5).map { Notice(id: "n-\($0)", title: "通知\($0)", body: "正文", urgency: "normal") }
        rig.server.answer(ScriptedServer.loggedIn(notices: notices))
        rig.loop.runPending()
        #expect(rig.desktop.posted.map(\.title) == ["通知5"])
        // The one bubble says the others came too (issue 21: two notices at once showed one, silently).
        #expect(rig.desktop.posted.first?.body == "正文\n4 more campus notices came with it (ccrelay history lists them).",
                "\(rig.desktop.posted)")
        let journal = try rig.store().alerts(limit: 10)
        #expect(journal.filter { $0.kind == .notice }.count == 5)
        #expect(rig.desktop.badges.last?.count == 5, "the badge counts every unread notice")
        #expect(try rig.store().seenNotices() == Set(notices.map(\.id)))
    }

    @Test func aPasswordLoginWithoutAKeyringEntryIsACredentialsAlertWithItsCode() throws {
        let rig = try DaemonHarness(config: "[auth]\nuser = 20231234")
        rig.loop.runPending()
        #expect(rig.server.requests.isEmpty, "no login without the password")
        let status = rig.daemon.status()
        #expect(status.state == "logged-out")
        #expect(status.lastErrorCode == "no-password")
        #expect(status.lastError.contains("ccrelay login --save-password --user 20231234"))
        #expect(rig.desktop.posted.map(\.kind) == [.credentials])
    }

    @Test func thePasswordFromTheKeyringGoesWithTheLogin() throws {
        let rig = try DaemonHarness(config: "[auth]\nuser = 20231234", passwords: ["20231234": "密码"])
        #expect(rig.server.pending == .login(user: "20231234", password: "密码"))
    }

    @Test func aFailingServerRaisesOneWarningAndRecoveryClosesIt() throws {
        let rig = try DaemonHarness(config: "[keepalive]\nwarn-before = 100")
        rig.server.answer(ScriptedServer.loggedIn(interval: 60, timeout: 180))
        for _ in 0..<12 {
            rig.loop.advance(by: .seconds(10))
            if rig.server.pending != nil { rig.server.answer(.serverError(status: 503, message: nil)) }
        }
        #expect(rig.desktop.posted.map(\.kind) == [.keepAliveFailing], "one warning for the episode")
        #expect(rig.daemon.status().lastErrorCode == "server-error")
        #expect(rig.desktop.announced.contains(.state))
        while rig.server.pending == nil { rig.loop.advance(by: .seconds(1)) }
        rig.server.answer(ScriptedServer.accepted())
        rig.loop.runPending()
        #expect(rig.desktop.posted.map(\.kind) == [.keepAliveFailing, .backOnline])
        #expect(rig.desktop.closed.contains(.keepAliveFailing))
        #expect(rig.daemon.status().state == "online")
    }

    /// Issue 33.7: the `ccrelay status` that activated the daemon said badge 0, and the real count a second later.
    @Test func theFirstSnapshotCountsTheJournalsUnreadAlerts() throws {
        let rig = try DaemonHarness { folder in
            let store = try AlertStore(path: folder + "/alerts.db", log: { _ in })
            try store.record(Alert(kind: .loggedOut, title: "Logged out", body: "before the restart", urgency: .critical))
            try store.record(Alert(kind: .notice, title: "Notice", body: "maintenance", urgency: .normal))
        }
        let first = try #require(rig.desktop.shownAtStart)
        #expect(first.badge == BadgeState(count: 2, urgent: true), "what an activating GetStatus is answered with: \(first.badge)")
        #expect(rig.desktop.published.first?.badge == first.badge)
    }

    @Test func clickingABubbleAcknowledgesItsKindAndLowersTheBadge() throws {
        let rig = try DaemonHarness(config: "[keepalive]\nwarn-before = 100")
        rig.server.answer(ScriptedServer.loggedIn(interval: 60, timeout: 180, notices: [
            Notice(id: "n-1", title: "维护", body: "今晚", urgency: "critical"),
        ]))
        rig.loop.runPending()
        #expect(rig.daemon.status().badge == 1 && rig.daemon.status().urgent)
        rig.desktop.onAlertEvent?(.closed(.notice, .dismissed))
        #expect(rig.daemon.status().badge == 0)
        #expect(rig.desktop.badges.last == BadgeState(count: 0, urgent: false))
    }

    @Test func aReplacedCertificateIsTriedOnceItsFilesHaveBeenQuietForASecond() throws {
        let rig = try DaemonHarness(config: "[auth]\ncertificate = {folder}/student.pem\nkey = {folder}/student.key")
        rig.server.answer(.transportFailure(.clientCertificateRefused(.unknownAuthority, "tlsv1 alert unknown ca")))
        rig.loop.runPending()
        #expect(rig.daemon.status().state == "logged-out")
        #expect(rig.daemon.status().lastErrorCode == "certificate-refused")
        // The student saves a new certificate, then its key (real files, real inotify).
        let inotify = try #require(rig.loop.watched.first { $0.value.contains(.readable) }?.key)
        try "new certificate".write(toFile: rig.folder + "/student.pem", atomically: true, encoding: .utf8)
        rig.loop.ready(inotify, .readable)
        rig.loop.advance(by: .milliseconds(600))
        try "new key".write(toFile: rig.folder + "/student.key", atomically: true, encoding: .utf8)
        rig.loop.ready(inotify, .readable)
        rig.loop.advance(by: .milliseconds(900))
        #expect(rig.server.requests.count == 1, "not while the files are still changing")
        rig.loop.advance(by: .milliseconds(200))
        #expect(rig.server.requests.count == 2 && rig.server.pending == .login(user: nil, password: nil))
        #expect(rig.server.drops >= 1, "a fresh connection, not the TLS session of the refused certificate")
        #expect(rig.logged.contains { $0.contains("student.key changed; logging in again") })
    }

    @Test func anUnrelatedFileInTheFolderDoesNotLogIn() throws {
        let rig = try DaemonHarness(config: "[auth]\ncertificate = {folder}/student.pem\nkey = {folder}/student.key")
        rig.server.answer(.transportFailure(.clientCertificateRefused(.unknownAuthority, "tlsv1 alert unknown ca")))
        let inotify = try #require(rig.loop.watched.first { $0.value.contains(.readable) }?.key)
        try "notes".write(toFile: rig.folder + "/notes.txt", atomically: true, encoding: .utf8)
        rig.loop.ready(inotify, .readable)
        rig.loop.advance(by: .seconds(5))
        #expect(rig.server.requests.count == 1)
    }

    @Test func theStatusBubbleSaysTheStateAndItsActionsDoWhatTheySay() throws {
        let rig = try DaemonHarness()
        rig.server.answer(ScriptedServer.loggedIn(notices: [Notice(id: "n-1", title: "维护", body: "今晚", urgency: "normal")]))
        rig.loop.runPending()
        rig.daemon.request(.showStatus(setupCommand: false))
        let bubble = try #require(rig.desktop.posted.last)
        #expect(bubble.kind == .status && bubble.transient)
        #expect(bubble.body.contains("outside access for 10.1.2.3") && bubble.body.contains("1 unread"), "\(bubble.body)")
        #expect(bubble.actions.map(\.key) == [AlertAction.logoutKey, AlertAction.clearBadgeKey])
        #expect(bubble.actions.map(\.label) == ["Log out", "Clear 1 unread"])
        #expect(try rig.store().alerts(limit: 10).allSatisfy { $0.kind != .status }, "the status bubble is not journaled")

        rig.desktop.onAlertEvent?(.actionInvoked(.status, key: AlertAction.clearBadgeKey, activationToken: nil))
        #expect(rig.daemon.status().badge == 0)
        rig.desktop.onAlertEvent?(.actionInvoked(.status, key: AlertAction.logoutKey, activationToken: nil))
        #expect(rig.server.pending == .logout)
        #expect(rig.daemon.status().state == "offline")
        rig.daemon.request(.showStatus(setupCommand: false))
        #expect(rig.desktop.posted.last?.actions.map(\.label) == ["Log in"])
        rig.desktop.onAlertEvent?(.actionInvoked(.status, key: AlertAction.loginKey, activationToken: nil))
        #expect(rig.server.requests.last == .login(user: nil, password: nil))
    }

    @Test func anAlertsDefaultActionShowsTheStatus() throws {
        let rig = try DaemonHarness(config: "[keepalive]\nauto-relogin = false")
        rig.server.answer(ScriptedServer.loggedIn())
        rig.loop.advance(by: .seconds(60))
        rig.server.answer(.loggedOut(reason: "kicked", message: "bye"))
        rig.loop.runPending()
        #expect(rig.desktop.posted.last?.kind == .loggedOut)
        rig.desktop.onAlertEvent?(.actionInvoked(.loggedOut, key: AlertAction.defaultKey, activationToken: nil))
        #expect(rig.desktop.posted.last?.kind == .status, "Show status shows it")
        #expect(rig.daemon.status().badge == 0, "and acknowledges the alert")
    }

    @Test func networkChangesPauseRequestsAndTheReturnSendsAKeepAliveOnAFreshConnection() throws {
        let rig = try DaemonHarness()
        #expect(rig.system.started)
        rig.server.answer(ScriptedServer.loggedIn(interval: 60, timeout: 180))
        rig.system.send(.network(online: false, why: "the network went down: eth0's link went down (netlink)"))
        #expect(rig.daemon.status().state == "no-network")
        rig.loop.advance(by: .seconds(150))
        #expect(rig.server.requests.count == 1, "no requests while the network is down")
        let drops = rig.server.drops
        rig.system.send(.network(online: true, why: "eth0's link came back (netlink)"))
        #expect(rig.server.pending == .keepAlive(seq: 1), "a keep-alive at once when it returns")
        #expect(rig.server.drops == drops + 1, "on a fresh connection")
        rig.server.answer(ScriptedServer.accepted())
        #expect(rig.daemon.status().state == "online")
        #expect(rig.desktop.posted.isEmpty, "no alert for a network that came back in time")
    }

    @Test func sleepWaitsForTheKeepAliveDueSoonThenLetsTheMachineSleep() throws {
        let rig = try DaemonHarness()
        rig.server.answer(ScriptedServer.loggedIn(interval: 60, timeout: 180))
        rig.loop.advance(by: .seconds(50))
        rig.system.send(.system(.sleeping))
        #expect(rig.server.pending == .keepAlive(seq: 1), "due within half an interval: sent before sleeping")
        #expect(rig.system.sleepLocksReleased == 0, "the inhibitor is held until it is answered")
        rig.server.answer(ScriptedServer.accepted())
        #expect(rig.system.sleepLocksReleased == 1)
        #expect(rig.daemon.status().state == "sleeping")
        rig.system.send(.system(.resumed))
        #expect(rig.server.pending == .keepAlive(seq: 2), "a keep-alive right after resume")
    }

    @Test func stoppingWithLogoutOnExitLogsOutBeforeTheConnectionGoes() throws {
        let rig = try DaemonHarness(config: "[keepalive]\nlogout-on-exit = true")
        rig.server.answer(ScriptedServer.loggedIn())
        var stopped = false
        rig.daemon.stop { stopped = true }
        #expect(rig.server.pending == .logout)
        #expect(!stopped, "the connection is dropped after the logout, in order")
        rig.server.answer(.loggedOutByRequest)
        #expect(stopped)
        #expect(try rig.store().savedSession() == nil, "nothing to carry on with")
    }

    /// issue 21: an alert acknowledged from the tray (or by Clear badge) while no notification
    /// server ran still popped up, red, when one appeared; and Clear badge left critical bubbles on screen.
    @Test func acknowledgedAlertsLeaveNoBubbleOnScreenOrWaiting() throws {
        let rig = try DaemonHarness(config: "[keepalive]\nauto-relogin = false")
        rig.server.answer(ScriptedServer.loggedIn(interval: 60, timeout: 180))
        rig.loop.advance(by: .seconds(60))
        rig.server.answer(.loggedOut(reason: "kicked", message: nil))
        rig.daemon.handle(.certificateInspected(secondsUntilExpiry: 3 * 86_400))
        #expect(rig.desktop.posted.map(\.kind) == [.loggedOut, .credentials])
        let logout = try #require(try rig.store().alerts(limit: 5).first { $0.kind == .loggedOut })
        rig.daemon.request(.acknowledge(alertID: logout.id))
        #expect(rig.desktop.closed.contains(.loggedOut) && !rig.desktop.closed.contains(.credentials),
                "the logout's bubble goes; the unread credentials alert's stays: \(rig.desktop.closed)")
        _ = try rig.daemon.clearBadge()
        #expect(rig.desktop.closed.contains(.credentials), "Clear badge closes what it acknowledged: \(rig.desktop.closed)")
        #expect(!rig.desktop.closed.contains(.status) && !rig.desktop.closed.contains(.backOnline))
    }

}

/// Issue 34: `handle` is never re-entered from inside carrying out effects.
/// A password login whose password file cannot be read published
/// `logged-out` from the nested call and then the outer list published the
/// older `logging-in` over it: status, tray and badge stayed wrong.
@Suite struct MailboxTests {
    @Test func anUnreadablePasswordFilePublishesLoggedOutLast() throws {
        let rig = try DaemonHarness(config: "[auth]\nuser = x\npassword-file = {folder}/no-such-password")
        rig.loop.runPending()
        #expect(rig.desktop.published.last?.state == .loggedOut, "\(rig.desktop.published.map(\.state))")
        #expect(rig.desktop.published.last?.problem?.code == .noPassword)
        rig.daemon.request(.login)
        rig.loop.runPending()
        #expect(rig.desktop.published.last?.state == .loggedOut, "after the user's login too: \(rig.desktop.published.map(\.state))")
    }
}
