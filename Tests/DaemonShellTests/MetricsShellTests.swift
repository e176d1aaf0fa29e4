@testable import CCProtocol
@testable import DaemonShell
import AlertJournal
import DesktopServices
import FileAccess
import Foundation
import CCRelayCore
import Testing
import TestSupport

/// The daemon's metrics textfile (issue 36) on the embedded loop: written
/// when a publication changes what it holds and never otherwise (no timer,
/// no write per keep-alive), the same text `GetStatus` gives `ccrelay
/// metrics`, drops that survive a restart, a folder that cannot be written
/// said once and noted in the status, links never followed, the file gone when the daemon stops.
@Suite(.desktopBudget) struct MetricsShellTests {
    static func rig(_ extra: String = "", beforeStart: (String) throws -> Void = { _ in }) throws -> DaemonHarness {
        try DaemonHarness(config: "[keepalive]\nauto-relogin = false\n[metrics]\ntextfile = {folder}/textfiles/ccrelay.prom\n" + extra,
                          wallClock: 1_800_000_000) { folder in
            try FileManager.default.createDirectory(atPath: folder + "/textfiles", withIntermediateDirectories: true)
            try beforeStart(folder)
        }
    }

    static func text(_ rig: DaemonHarness) -> String? { try? String(contentsOfFile: rig.folder + "/textfiles/ccrelay.prom", encoding: .utf8) }

    /// Each write is a rename of a new file: its inode tells writes apart.
    static func inode(_ rig: DaemonHarness) -> UInt64? {
        (try? FileManager.default.attributesOfItem(atPath: rig.folder + "/textfiles/ccrelay.prom"))?[.systemFileNumber] as? UInt64
    }

    @Test func theTextfileFollowsTheStateAtOnceAndKeepAlivesAtMostOnceAMinute() throws {
        let rig = try Self.rig()
        let plain = try DaemonHarness(config: "[keepalive]\nauto-relogin = false")
        for harness in [rig, plain] {
            harness.server.answer(ScriptedServer.loggedIn(interval: 20, timeout: 180))
            harness.loop.runPending()
        }
        let text = try #require(Self.text(rig))
        #expect(text.contains(#"ccrelay_state{state="online",instance="user"} 1"#), "\(text)")
        #expect(text.contains(#"ccrelay_info{version="test",protocol="cc1",instance="user"} 1"#))
        #expect(text.contains(#"ccrelay_drops_total{cause="kicked",instance="user"} 0"#))
        #expect(text.contains(#"ccrelay_state_changed_timestamp_seconds{instance="user"} 1800000000"#))
        #expect(text.contains(#"ccrelay_session_expires_timestamp_seconds{instance="user"} 1800000180"#))
        #expect(rig.loop.armedTimers == plain.loop.armedTimers, "the metrics arm no timer of their own")
        #expect(rig.loop.nextDeadline == plain.loop.nextDeadline)
        var writes: [UInt64?] = [Self.inode(rig)]
        func keepAlive(_ harness: DaemonHarness, clockToo: Bool) {
            let wall = harness.loop.wallClock
            harness.loop.advance(by: .seconds(20))
            if !clockToo { harness.loop.setWallClock(wall) }
            harness.server.answer(ScriptedServer.accepted())
            harness.loop.runPending()
        }
        // The wall clock stands still: every keep-alive leaves the facts as they were.
        for _ in 1...5 {
            keepAlive(rig, clockToo: false)
            keepAlive(plain, clockToo: false)
        }
        #expect(Self.inode(rig) == writes[0], "five keep-alives, the same facts: no write")
        // It moves with them: the expiry moves 20 s a keep-alive, and is written once a minute.
        for _ in 1...9 {
            keepAlive(rig, clockToo: true)
            keepAlive(plain, clockToo: false)
            if Self.inode(rig) != writes.last! { writes.append(Self.inode(rig)) }
        }
        #expect(writes.count == 1 + 3, "nine keep-alives 20 s apart: three writes (the first, and one a minute after each)")
        #expect(Self.text(rig)?.contains(#"ccrelay_session_expires_timestamp_seconds{instance="user"} 1800000320"#) == true,
                "the expiry of the last write, at the seventh: \(Self.text(rig) ?? "")")
        #expect(rig.loop.armedTimers == plain.loop.armedTimers && rig.loop.nextDeadline == plain.loop.nextDeadline)
        // A kick: written at once, with its drop.
        rig.loop.advance(by: .seconds(20))
        rig.server.answer(.loggedOut(reason: "kicked", message: nil))
        rig.loop.runPending()
        let kicked = try #require(Self.text(rig))
        #expect(Self.inode(rig) != writes.last!)
        #expect(kicked.contains(#"ccrelay_state{state="logged-out",instance="user"} 1"#), "\(kicked)")
        #expect(kicked.contains(#"ccrelay_drops_total{cause="kicked",instance="user"} 1"#))
        #expect(!kicked.contains("ccrelay_session_expires_timestamp_seconds{"), "no session, no expiry")
        let entries = try FileManager.default.contentsOfDirectory(atPath: rig.folder + "/textfiles")
        #expect(entries == ["ccrelay.prom"], "no temporary file is left: \(entries)")
    }

    @Test func getStatusCarriesTheSameTextTheFileHolds() throws {
        let rig = try Self.rig()
        rig.server.answer(ScriptedServer.loggedIn(interval: 60, timeout: 180))
        rig.loop.runPending()
        let file = try #require(Self.text(rig))
        // As `ccrelay metrics` reads it: the a{sv} and back.
        let status = DaemonStatus(dictionary: rig.daemon.status().dictionary)
        let printed = MetricsText.render(MetricsFacts(status: status))
        func steady(_ text: String) -> [Substring] { text.split(separator: "\n").filter { !$0.hasPrefix("ccrelay_session_expires_timestamp_seconds{") } }
        #expect(steady(printed) == steady(file))
        #expect(status.metrics?.textfile == rig.folder + "/textfiles/ccrelay.prom" && status.metrics?.problem == "")
        let expires = try #require(status.metrics?.sessionExpires)
        #expect(expires == 1_800_000_180, "the loop's wall clock and the session's 180 s")
    }

    @Test func theDropsOfEarlierRunsAreCountedFromTheTimeline() throws {
        let rig = try Self.rig { folder in
            let store = try AlertStore(path: folder + "/alerts.db", log: { _ in })
            for (from, to, cause) in [("online", "logged-out", "the server ended the session (kicked)"),
                                      ("logged-out", "online", "login: granted"),
                                      ("online", "no-network", "the network went down: wlan0's link is down (netlink)"),
                                      ("online", "logged-out", "the server ended the session (kicked)")] {
                try store.recordTimeline(TimelineEntry(at: 1_700_000_000, subject: .state, from: from, to: to, cause: cause))
            }
        }
        rig.server.answer(ScriptedServer.loggedIn(interval: 60, timeout: 180))
        rig.loop.runPending()
        let text = try #require(Self.text(rig))
        #expect(text.contains(#"ccrelay_drops_total{cause="kicked",instance="user"} 2"#), "\(text)")
        #expect(text.contains(#"ccrelay_drops_total{cause="no-network",instance="user"} 1"#))
        rig.loop.advance(by: .seconds(60))
        rig.server.answer(.loggedOut(reason: "kicked", message: nil))
        rig.loop.runPending()
        #expect(Self.text(rig)?.contains(#"ccrelay_drops_total{cause="kicked",instance="user"} 3"#) == true)
    }

    @Test func aFolderThatCannotBeWrittenIsOneLogLineAndANoteNotALoop() throws {
        let rig = try DaemonHarness(config: "[keepalive]\nauto-relogin = false\n[metrics]\ntextfile = {folder}/missing/ccrelay.prom")
        let plain = try DaemonHarness(config: "[keepalive]\nauto-relogin = false")
        for harness in [rig, plain] {
            harness.server.answer(ScriptedServer.loggedIn(interval: 60, timeout: 180))
            harness.loop.runPending()
            for _ in 1...3 {
                harness.loop.advance(by: .seconds(60))
                harness.server.answer(ScriptedServer.accepted())
                harness.loop.runPending()
            }
            harness.daemon.request(.logout)
            harness.server.answer(.loggedOut(reason: "logout", message: nil))
            harness.loop.runPending()
            harness.daemon.request(.login)
            harness.server.answer(ScriptedServer.loggedIn(interval: 60, timeout: 180))
            harness.loop.runPending()
        }
        let said = rig.logged.filter { $0.hasPrefix("metrics:") }
        #expect(said.count == 1, "\(said)")
        #expect(said.first?.contains("there is no folder \(rig.folder)/missing") == true, "\(said)")
        #expect(rig.daemon.status().state == "online", "the daemon carries on")
        #expect(rig.daemon.status().metrics?.problem.hasPrefix("cannot write \(rig.folder)/missing/ccrelay.prom: ") == true)
        #expect(rig.loop.armedTimers == plain.loop.armedTimers && rig.loop.nextDeadline == plain.loop.nextDeadline, "no retry timer")
        // The folder appears: the next change writes, says so once, and the note goes.
        try FileManager.default.createDirectory(atPath: rig.folder + "/missing", withIntermediateDirectories: true)
        rig.daemon.request(.logout)
        rig.server.answer(.loggedOut(reason: "logout", message: nil))
        rig.loop.runPending()
        #expect((try? String(contentsOfFile: rig.folder + "/missing/ccrelay.prom", encoding: .utf8))?.contains(#"state="offline""#) == true)
        #expect(rig.logged.filter { $0.hasPrefix("metrics:") }.count == 2)
        #expect(rig.daemon.status().metrics?.problem == "")
    }

    @Test func theFileGoesWhenTheDaemonStops() throws {
        let rig = try Self.rig()
        rig.server.answer(ScriptedServer.loggedIn(interval: 60, timeout: 180))
        rig.loop.runPending()
        #expect(Self.text(rig) != nil)
        var stopped = false
        rig.daemon.stop { stopped = true }
        rig.loop.runPending()
        #expect(stopped)
        #expect(Self.text(rig) == nil, "no stale 'online' for the node exporter to serve")
    }

    /// A link planted where the temporary file or the textfile goes is never followed.
    @Test func linksInTheFolderAreNeverFollowed() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-atomic-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let victim = folder + "/victim"
        try "precious\n".write(toFile: victim, atomically: false, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: folder + "/.ccrelay.prom.\(getpid()).tmp", withDestinationPath: victim)
        try FileManager.default.createSymbolicLink(atPath: folder + "/ccrelay.prom", withDestinationPath: victim)
        try AtomicFile(path: folder + "/ccrelay.prom").write("ccrelay_info 1\n")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n")
        let written = try FileManager.default.attributesOfItem(atPath: folder + "/ccrelay.prom")
        #expect(written[.type] as? FileAttributeType == .typeRegular)
        #expect((written[.posixPermissions] as? Int) == 0o644, "readable by the node exporter whatever the umask")
        #expect(try String(contentsOfFile: folder + "/ccrelay.prom", encoding: .utf8) == "ccrelay_info 1\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["ccrelay.prom", "victim"])
    }
}
