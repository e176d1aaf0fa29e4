@testable import CCProtocol
@testable import DaemonShell
import DesktopServices
import Foundation
import CCRelayCore
import Testing
import TestSupport

/// The daemon's rules about its process and the machine, on the embedded
/// loop with a fake `ProcessHooks`: a sleep nobody announced, systemd's
/// notifications and watchdog, and restarting for a changed configuration.
@Suite(.desktopBudget) struct ProcessRulesTests {
    @Test func aSleepNobodyAnnouncedIsNoticedAtTheNextTimerAndTheSessionResumes() throws {
        let rig = try DaemonHarness()
        rig.server.answer(ScriptedServer.loggedIn(interval: 60, timeout: 180))
        let drops = rig.server.drops
        // A short jump of the sleep clock is not a sleep.
        rig.processLog.slept = .seconds(3)
        rig.loop.advance(by: .seconds(60))
        #expect(!rig.logged.contains { $0.contains("slept without notice") })
        #expect(rig.server.pending == .keepAlive(seq: 1))
        rig.server.answer(ScriptedServer.accepted())
        // The lid closed for 40 s, and logind said nothing: the boot clock counted it.
        rig.loop.advance(by: .seconds(20))
        rig.processLog.slept = .seconds(43)
        rig.loop.advance(by: .seconds(40))
        #expect(rig.logged.contains { $0.contains("the machine slept without notice; resuming") }, "\(rig.logged)")
        #expect(rig.server.pending == .keepAlive(seq: 2), "a keep-alive at once")
        #expect(rig.server.drops > drops, "on a fresh connection: the old one did not survive the sleep")
        rig.server.answer(ScriptedServer.accepted())
        #expect(rig.daemon.status().state == "online")
    }

    @Test func systemdHearsReadyEveryStateTheWatchdogAndTheStop() throws {
        let rig = try DaemonHarness(watchdog: .seconds(5))
        #expect(rig.processLog.notifications.contains("READY=1\nSTATUS=logging-in"), "\(rig.processLog.notifications)")
        rig.server.answer(ScriptedServer.loggedIn(interval: 60, timeout: 180))
        rig.loop.advance(by: .zero)
        #expect(rig.processLog.notifications.contains("STATUS=online"))
        let fed = rig.processLog.notifications.filter { $0 == "WATCHDOG=1" }.count
        #expect(fed == 1, "fed at once")
        rig.loop.advance(by: .seconds(15))
        #expect(rig.processLog.notifications.filter { $0 == "WATCHDOG=1" }.count == fed + 3, "every 5 s")
        var stopped = false
        rig.daemon.stop { stopped = true }
        rig.loop.runPending()
        #expect(stopped && rig.processLog.notifications.contains("STOPPING=1"))
    }

    @Test func withoutAWatchdogNothingElseWakesTheDaemon() throws {
        let rig = try DaemonHarness()
        rig.server.answer(ScriptedServer.loggedIn(interval: 60, timeout: 180))
        #expect(!rig.processLog.notifications.contains("WATCHDOG=1"))
        rig.loop.advance(by: .seconds(59))
        #expect(rig.server.pending == nil, "no request before the interval")
    }

    @Test func aChangedValidConfigurationRestartsTheDaemonAnUnchangedOrInvalidOneDoesNot() throws {
        let rig = try DaemonHarness()
        rig.server.answer(ScriptedServer.loggedIn(interval: 60, timeout: 180))
        for _ in 1...2 {
            rig.loop.advance(by: .seconds(60))
            rig.server.answer(ScriptedServer.accepted())
        }
        let path = rig.folder + "/ccrelay.conf"
        let inotify = try #require(rig.loop.watched.first { $0.value.contains(.readable) }?.key)
        func write(_ text: String) throws {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            chmod(path, 0o600)
            rig.loop.ready(inotify, .readable)
            rig.loop.runPending()
        }
        try write("[server]\nurl = ftp://cc.campus.example/\n")
        #expect(rig.processLog.restarts == 0)
        #expect(rig.logged.contains { $0.contains("the changed configuration is not used until it is fixed") && $0.contains("ccrelay.conf:2") },
                "\(rig.logged)")
        try write("[server]\nurl = https://cc.campus.example/   ; the same, with a comment\n")
        #expect(rig.processLog.restarts == 0, "the same configuration: nothing to do")
        try write("[server]\nurl = https://cc.campus.example/\n[keepalive]\nwarn-before = 30\n")
        #expect(rig.processLog.restarts == 1)
        #expect(rig.logged.contains("the configuration changed; restarting with it"))
        #expect(try rig.store().savedSession()?.seq == 2, "the session is saved first, as it is now, for the new process to carry on")
    }

    /// issue 21: a daemon outlived its desktop session (re-parented to PID 1,
    /// keeping the previous student of a lab PC online). When logind closes
    /// the session it logs out (as configured) and exits.
    @Test func theDesktopSessionClosingLogsOutAndEndsTheDaemon() throws {
        let rig = try DaemonHarness(config: "[keepalive]\nlogout-on-exit = true")
        rig.server.answer(ScriptedServer.loggedIn())
        rig.system.onDesktopSessionClosed?()
        #expect(rig.server.pending == .logout)
        #expect(rig.processLog.exits.isEmpty, "after the logout")
        rig.server.answer(.loggedOutByRequest)
        #expect(rig.processLog.exits == [0])
        #expect(rig.logged.contains("the desktop session closed; stopping with it"), "\(rig.logged)")
    }

    /// The session bus gone for good with no logind session to ask: the session is over.
    @Test func aSessionBusThatStaysAwayEndsTheDaemonUnlessLogindFollowsTheSession() throws {
        let alone = try DaemonHarness()
        alone.server.answer(ScriptedServer.loggedIn())
        alone.desktop.onBusGone?()
        alone.loop.runPending()
        #expect(alone.processLog.exits == [0], "\(alone.logged)")
        let followed = try DaemonHarness()
        followed.system.followsDesktopSession = true
        followed.server.answer(ScriptedServer.loggedIn())
        followed.desktop.onBusGone?()
        followed.loop.runPending()
        #expect(followed.processLog.exits.isEmpty, "logind will say when the session ends")
        #expect(followed.logged.contains { $0.contains("still trying (logind says when the session ends)") }, "\(followed.logged)")
    }
}
