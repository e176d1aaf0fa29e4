import Foundation
import TestSupport
import CCRelayCore
import CoreVocabulary
import Testing

/// The daemon's D-Bus API through the real CLI: status (plain, JSON, watch),
/// login, logout, history, one daemon per session, and carrying a session
/// over a restart.
@Suite(.desktopBudget) struct ControlAPITests {
    func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text)")
    }

    @Test func statusReportsTheSessionAsJSONAndAsText() async throws {
        let rig = try await DaemonRig()
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        let result = try rig.cli(["status", "--json"])
        #expect(result.status == 0, "\(result.standardError)")
        let status = try json(result.standardOutput)
        #expect(status["state"] as? String == "online")
        #expect(status["badge"] as? Int == 0)
        #expect(status["server"] as? String == rig.sim.url)
        #expect(status["ip"] as? String == "127.0.0.1")
        #expect(status["last_error"] as? String == "")
        let remaining = try #require(status["remaining"] as? Int, "\(status)")
        #expect(remaining > 0 && remaining <= 8)
        #expect(status["interval"] as? Int == 2 && status["timeout"] as? Int == 8)

        let text = try rig.cli(["status"])
        #expect(text.status == 0)
        #expect(text.standardOutput.contains(": online"), "\(text.standardOutput)")
        #expect(text.standardOutput.contains("keep-alive every 2 s, timeout 8 s"))
        #expect(!text.standardOutput.contains("\u{1B}["), "no colour when not on a terminal")
        // In the user's language, like the alerts.
        for (language, words) in [("zh_CN.UTF-8", ["服务器", "每 2 秒保持在线一次"]), ("zh_TW.UTF-8", ["伺服器", "每 2 秒保持連線一次"])] {
            var environment = rig.environment
            environment["LANG"] = language
            environment["LANGUAGE"] = ""
            environment["LC_ALL"] = ""
            environment["CCRELAY_LOCALEDIR"] = NotifyTestCommandTests.localeDirectory
            let translated = try run(DaemonRig.ccrelay, ["status"], environment: environment)
            #expect(words.allSatisfy(translated.standardOutput.contains), "\(language): \(translated.standardOutput)")
            #expect(!translated.standardOutput.contains(" s"), "seconds in Chinese too (秒): \(translated.standardOutput)")
            // The values stand in one column: a Chinese label is two terminal columns a character.
            for row in translated.standardOutput.split(separator: "\n").dropFirst() {
                let label = row.dropFirst(2).prefix { $0 != " " }
                let padding = row.dropFirst(2 + label.count).prefix { $0 == " " }
                #expect(DisplayWidth.columns(String(label)) + padding.count == 12, "\(language): “\(row)” is out of line")
            }
        }

        let introspection = try run("/usr/bin/busctl", ["--address=\(rig.bus.address)", "introspect", "io.github.ccrelay.CCRelay",
                                                        "/io/github/ccrelay/CCRelay", "io.github.ccrelay.CCRelay1"])
        for member in ["GetStatus", "ClearBadge", "Login", "Logout", "ListAlerts", "ShowStatus", "State", "Badge"] {
            #expect(introspection.standardOutput.contains(member), "\(member): \(introspection.standardOutput)")
        }
    }

    @Test func logoutAndLoginGoThroughTheDaemonAndWatchFollowsThem() async throws {
        let rig = try await DaemonRig()
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        let watchOutput = rig.logPath + ".watch"
        let watch = try ChildProcess(DaemonRig.ccrelay, ["status", "--watch"], environment: rig.environment,
                                     outputFiles: (watchOutput, watchOutput + ".err"))
        defer { watch.stop() }
        func watched() -> String { (try? String(contentsOfFile: watchOutput, encoding: .utf8)) ?? "" }
        #expect(await eventually { watched().contains("online") }, "the current state first: \(watched())")

        let logout = try rig.cli(["logout"])
        #expect(logout.status == 0, "\(logout.standardError)")
        #expect(await eventually { (try? rig.sim.sessions().first?["reason"] as? String) == "logout" }, "the server saw the logout")
        #expect(try json(try rig.cli(["status", "--json"]).standardOutput)["state"] as? String == "offline")
        #expect(try json(try rig.cli(["status", "--json"]).standardOutput)["remaining"] is NSNull)
        #expect(await eventually { watched().contains("offline") }, "\(watched())")

        let login = try rig.cli(["login"])
        #expect(login.status == 0, "\(login.standardError)")
        #expect(login.standardOutput.contains("Logged in (outside access for 127.0.0.1)"))
        #expect(try rig.sim.sessions().count == 2)
        #expect(await eventually { watched().split(separator: "\n").last?.contains("online") == true }, "\(watched())")

        kill(rig.daemon.pid, SIGTERM)
        #expect(rig.daemon.wait() == 0)
        #expect(await eventually { watched().contains("daemon not running") }, "\(watched())")
        // Each change once: no line repeats the state and badge of the one before it.
        let states = watched().split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().prefix(3).joined(separator: " ") }
        #expect(zip(states, states.dropFirst()).allSatisfy { $0 != $1 }, "\(watched())")
        let stopped = try rig.cli(["status"])
        #expect(stopped.status == 3)
        #expect(stopped.standardError.contains("not running"))
        #expect(try rig.cli(["logout"]).status == 3)
        #expect(try rig.cli(["login"]).status == 3)
    }

    @Test func aSecondDaemonNamesTheFirstAndExitsNonZero() async throws {
        let rig = try await DaemonRig()
        #expect(await eventually(timeout: .seconds(20)) { rig.log.contains("state: online") }, "\(rig.log)")
        let errors = rig.logPath + ".second"
        let second = try ChildProcess(DaemonRig.ccrelay, ["daemon", "--config", rig.configPath], environment: rig.environment,
                                      outputFiles: (errors + ".out", errors))
        defer { second.stop() }
        let exited = await eventually { !second.isRunning }
        #expect(exited, "the second daemon gives up")
        #expect(exited && second.wait() == 1)
        let message = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        #expect(message.contains("process \(rig.daemon.pid)"), "\(message)")
        #expect(message.contains("systemctl --user stop ccrelay"))
        #expect(rig.daemon.isRunning)
        #expect(try rig.sim.sessions().count == 1, "the second daemon never logged in")
    }

    @Test func historyListsTheJournalAsJSONAndText() async throws {
        let rig = try await DaemonRig()
        #expect(await eventually(timeout: .seconds(20)) { rig.log.contains("state: online") }, "\(rig.log)")
        try rig.sim.control("POST", "notice", [["id": "h-1", "title": "通知一", "body": "第一"], ["id": "h-2", "title": "通知二", "body": "第二"]])
        #expect(await eventually(timeout: .seconds(20)) { (try? rig.cli(["history"]).standardOutput.contains("通知二")) == true })
        try rig.sim.control("POST", "kick", ["message": "再见"])
        #expect(await eventually(timeout: .seconds(20)) { rig.log.contains("state: logged-out") }, "\(rig.log)")
        let result = try rig.cli(["history", "--json"])
        #expect(result.status == 0, "\(result.standardError)")
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [[String: Any]])
        #expect(entries.map { $0["kind"] as? String } == ["logged-out", "notice", "notice"], "newest first: \(entries)")
        #expect(entries[0]["urgency"] as? String == "critical")
        #expect((entries[0]["posted_at"] as? String)?.hasSuffix("Z") == true)
        #expect(entries[0]["acknowledged_at"] is NSNull)
        let limited = try rig.cli(["history", "--limit", "1", "--kind=notice"])
        #expect(limited.standardOutput.contains("通知二") && !limited.standardOutput.contains("通知一"), "\(limited.standardOutput)")
        #expect(limited.standardOutput.split(separator: "\n").count == 1)
        // The same journal with the daemon stopped, read from disk.
        kill(rig.daemon.pid, SIGTERM)
        #expect(rig.daemon.wait() == 0)
        let offline = try rig.cli(["history", "--json"])
        #expect(offline.status == 0)
        #expect(try JSONSerialization.jsonObject(with: Data(offline.standardOutput.utf8)) as? [[String: Any]] != nil)
        #expect(offline.standardOutput == result.standardOutput)
    }

    @Test func showPutsTheStatusInABubbleWithoutATerminal() async throws {
        let rig = try await DaemonRig()
        #expect(await eventually(timeout: .seconds(20)) { rig.log.contains("state: online") }, "\(rig.log)")
        let shown = try rig.cli(["show"])
        #expect(shown.status == 0, "\(shown.standardError)")
        let bubbles = LockedBox<[Dunst.Record]>([])
        #expect(await eventually { bubbles.set((try? rig.dunst.closeAllAndReadHistory()) ?? []); return !bubbles.get().isEmpty })
        let status = try #require(bubbles.get().first { $0.category == "x-ccrelay.status" }, "\(bubbles.get())")
        #expect(status.body.contains("outside access for 127.0.0.1"), "\(status.body)")
        // No daemon at all (as from the menu before it was ever started): a bubble says how to start one.
        let bus = try PrivateBus()
        let dunst = try await Dunst(on: bus)
        let alone = try run(DaemonRig.ccrelay, ["show"], environment: bus.environment)
        #expect(alone.status == 3)
        #expect(await eventually { ((try? dunst.closeAllAndReadHistory()) ?? []).contains { $0.body.contains("systemctl --user start ccrelay") } })
    }

    /// issue 21: `ccrelay show` with no notification server exited 0 and showed nothing.
    @Test func showWithoutANotificationServerSaysSoAndFails() async throws {
        let rig = try await DaemonRig(withDunst: false)
        #expect(await eventually(timeout: .seconds(20)) { rig.log.contains("state: online") }, "\(rig.log)")
        let shown = try rig.cli(["show"], environment: ["LANG": "C.UTF-8"])
        #expect(shown.status == 1, "\(shown.standardError)")
        #expect(shown.standardError.contains("no notification server runs in this session"), "\(shown.standardError)")
        // And the state of an earlier kick is not "the last error" after the user's own logout.
        try rig.sim.control("POST", "kick", ["message": "再见"])
        #expect(await eventually(timeout: .seconds(20)) { rig.log.contains("state: logged-out") }, "\(rig.log)")
        #expect(await eventually { (try? rig.cli(["status", "--json"]).standardOutput.contains("再见")) == true })
        #expect(try rig.cli(["logout"]).status == 0)
        let status = try rig.cli(["status", "--json"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [String: Any])
        #expect(json["last_error"] as? String == "", "\(status.standardOutput)")
    }

    @Test(arguments: [SIGTERM, SIGKILL])
    func aRestartCarriesOnWithTheSessionWithoutANewLogin(_ signal: Int32) async throws {
        // A 30 s session: the restart must come before its end, and on a loaded 2-core machine
        // starting the daemon again took longer than the usual 8 s.
        let rig = try await DaemonRig(simulator: ["--interval", "2", "--timeout", "30"])
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 2 }, "\(rig.log)")
        kill(rig.daemon.pid, signal)
        _ = rig.daemon.wait()
        let before = rig.acceptedReports()
        let again = try rig.startDaemon(logPath: rig.logPath + ".2")
        defer { again.stop() }
        func secondLog() -> String { (try? String(contentsOfFile: rig.logPath + ".2", encoding: .utf8)) ?? "" }
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= before + 2 }, "\(secondLog())")
        #expect(try rig.sim.sessions().count == 1, "no new login: \(secondLog())")
        #expect(secondLog().contains("carrying on with the session of the previous run"))
    }

    @Test func aRestartAfterTheServerForgotTheSessionLogsInQuietly() async throws {
        let rig = try await DaemonRig()
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        kill(rig.daemon.pid, SIGKILL)
        _ = rig.daemon.wait()
        try rig.sim.control("POST", "expire")
        let again = try rig.startDaemon(logPath: rig.logPath + ".2")
        defer { again.stop() }
        #expect(await eventually(timeout: .seconds(20)) { (try? rig.sim.sessions().count) == 2 }, "a new login")
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 2 })
        #expect(try rig.dunst.closeAllAndReadHistory().isEmpty, "no alert for a session that ran out while no daemon ran")
    }
}
