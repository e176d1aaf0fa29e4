import DBus
import Foundation
import CCRelayCore
import CoreVocabulary
import TestSupport
import Testing

/// The tray icon (issue 13): a StatusNotifierItem with a dbusmenu menu,
/// against a recording watcher (exact properties, signals, clicks) and a
/// real tray host under Xvfb.
@Suite(.desktopBudget) struct TrayTests {
    func status(_ rig: DaemonRig) -> [String: Any] {
        let output = (try? rig.cli(["status", "--json"]).standardOutput) ?? ""
        return (try? JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any]) ?? [:]
    }

    @Test func theItemRegistersShowsTheStateAndItsMenuActs() async throws {
        let rig = try await DaemonRig(extraConfig: "auto-relogin = false")
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        // A panel that starts after the daemon gets the item all the same.
        let watcher = try await RecordingWatcher(on: rig.bus)
        #expect(await eventually { watcher.service != nil }, "\(rig.log)")
        let service = try #require(watcher.service)
        // Registered by its unique name, which also owns the item's well-known name.
        #expect(service.hasPrefix(":"))
        #expect(try await watcher.connection.nameOwner("org.kde.StatusNotifierItem-\(rig.daemon.pid)-1") == service)

        let online = try await watcher.properties(of: service)
        #expect(online["Id"]?.get(String.self) == "io.github.ccrelay.CCRelay")
        #expect(online["Category"]?.get(String.self) == "SystemServices")
        #expect(online["Status"]?.get(String.self) == "Active", "never Passive: XFCE hides passive items")
        #expect(online["IconName"]?.get(String.self) == "io.github.ccrelay.CCRelay-online")
        #expect(online["Menu"]?.get(ObjectPath.self) == "/io/github/ccrelay/CCRelay/Menu")
        #expect(online["ItemIsMenu"]?.get(Bool.self) == false)
        let themePath = try #require(online["IconThemePath"]?.get(String.self))
        #expect(FileManager.default.fileExists(atPath: themePath + "/hicolor/scalable/status/io.github.ccrelay.CCRelay-online.svg"), "\(themePath)")
        guard case .structure(let tip)? = online["ToolTip"]?.value, tip.count == 4, case .string(let tipBody) = tip[3] else {
            Issue.record("ToolTip is (sa(iiay)ss): \(String(describing: online["ToolTip"]))")
            return
        }
        #expect(tipBody.contains("Online (127.0.0.1)") && tipBody.contains("left before the server logs this computer out"), "\(tipBody)")
        let before = try await watcher.menu(of: service)
        #expect(before.entries.map(\.1) == ["Online (127.0.0.1)", "-", "Log out", "Clear badge (0)", "-", "Set up…", "Quit CC Relay"])

        // Kicked: the icon, the status and the menu follow, and the host hears so.
        try rig.sim.control("POST", "kick", ["message": "你已被管理员下线"])
        #expect(await eventually(timeout: .seconds(20)) {
            (try? await watcher.properties(of: service))?["Status"]?.get(String.self) == "NeedsAttention"
        }, "a critical alert is unread")
        // Every signal whose property changed (LXQt re-reads the attention icon only on NewAttentionIcon).
        #expect(await eventually {
            Set(["NewStatus", "LayoutUpdated", "NewIcon", "NewAttentionIcon", "NewToolTip"]).isSubset(of: Set(watcher.signals.get()))
        }, "\(watcher.signals.get())")
        #expect(try await watcher.properties(of: service)["IconName"]?.get(String.self) == "io.github.ccrelay.CCRelay-logged-out")
        let after = try await watcher.menu(of: service)
        #expect(after.revision > before.revision)
        #expect(after.entries.map(\.1).prefix(4) == ["Logged out", "-", "Log in", "Clear badge (1)"], "\(after.entries)")
        // Every entry says whether it is enabled: GNOME's AppIndicator extension and Plasma keep
        // the value of a property a new layout leaves out, so "Clear badge", disabled at 0, stayed
        // disabled after alerts came (RealDesktopTests).
        #expect(after.entries.first { $0.0 == 4 }?.2 == true)
        #expect(before.implicit.isEmpty && after.implicit.isEmpty, "entries leaving enabled out: \(before.implicit), \(after.implicit)")
        let alert = try #require(after.entries.first { $0.1.hasPrefix("● ") })
        #expect(alert.1 == "● Logged out of the campus network")

        // Clicking the alert acknowledges it; Log in logs in.
        try await watcher.click(alert.0, of: service)
        #expect(await eventually { status(rig)["badge"] as? Int == 0 }, "\(status(rig))")
        #expect(await eventually { (try? await watcher.properties(of: service))?["Status"]?.get(String.self) == "Active" })
        try await watcher.click(3, of: service)
        #expect(await eventually(timeout: .seconds(20)) { status(rig)["state"] as? String == "online" }, "\(rig.log)")

        // The primary click shows the status bubble.
        try await watcher.activate(service)
        #expect(await eventually { (try? rig.shown())?.contains("x-ccrelay.status") == true })

        // The panel restarts: the item registers again.
        let registered = watcher.registrations.get().count
        try await watcher.restart()
        #expect(await eventually { watcher.registrations.get().count > registered })
    }

    /// issue 21: "Set up…" once set up opens `ccrelay setup --edit` on the daemon's own
    /// configuration in the desktop's terminal (a plain setup refused to replace the file and the
    /// window closed at once), and the window waits for Enter; with no terminal, the status
    /// bubble says the command to run.
    @Test func setUpEditsTheConfigurationInATerminalOrTheBubbleSaysTheCommand() async throws {
        let terminal = try FakeTerminal()
        // No user manager to enable a unit in: setup says so and goes on.
        let rig = try await DaemonRig(extraEnvironment: ["PATH": terminal.path, "XDG_RUNTIME_DIR": "/nonexistent"])
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        let watcher = try await RecordingWatcher(on: rig.bus)
        #expect(await eventually { watcher.service != nil }, "\(rig.log)")
        let service = try #require(watcher.service)
        let setUp = try #require(try await watcher.menu(of: service).entries.first { $0.1 == "Set up…" })
        try await watcher.click(setUp.0, of: service)
        let output = terminal.output
        #expect(await eventually(timeout: .seconds(30)) { output().contains("Press Enter to close this window.") },
                "\(terminal.arguments())\n\(output())\n\(rig.log)")
        #expect(output().contains("Wrote \(rig.configPath)."), "the current answers tried and written again: \(output())")
        #expect(!output().contains("exists"), "\(output())")

        // Without a terminal: the status bubble says what to run.
        let alone = try await DaemonRig(extraEnvironment: ["PATH": "/nonexistent"])
        #expect(await eventually(timeout: .seconds(20)) { alone.acceptedReports() >= 1 }, "\(alone.log)")
        let other = try await RecordingWatcher(on: alone.bus)
        #expect(await eventually { other.service != nil }, "\(alone.log)")
        let otherService = try #require(other.service)
        try await other.click(setUp.0, of: otherService)
        #expect(await eventually {
            (try? alone.dunst.closeAllAndReadHistory())?.contains { $0.body.contains("run ccrelay setup --edit") } == true
        }, "\(alone.log)")
        rig.daemon.stop()
        alone.daemon.stop()
    }

    /// issue 25: the alerts in the menu link to the timeline that says why
    /// they came: `ccrelay timeline` in the desktop's terminal.
    @Test func theTimelineEntryShowsWhyTheSessionChangedInATerminal() async throws {
        let terminal = try FakeTerminal()
        let rig = try await DaemonRig(extraEnvironment: ["PATH": terminal.path])
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        try rig.sim.control("POST", "kick", ["message": "再见"])
        let watcher = try await RecordingWatcher(on: rig.bus)
        #expect(await eventually { watcher.service != nil }, "\(rig.log)")
        let service = try #require(watcher.service)
        var entry: (Int32, String, Bool)?
        #expect(await eventually(timeout: .seconds(20)) {
            entry = try? await watcher.menu(of: service).entries.first { $0.1 == "Why it happened (timeline)…" }
            return entry != nil
        }, "the kick's alert brings the entry: \(rig.log)")
        try await watcher.click(try #require(entry).0, of: service)
        let output = terminal.output
        #expect(await eventually(timeout: .seconds(30)) { output().contains("Press Enter to close this window.") }, "\(output())\n\(rig.log)")
        #expect(output().contains("online → logged-out  the server ended the session (kicked)"), "\(output())")
        #expect(output().contains("1 drop: 1 the server ended the session (kicked)"), "\(output())")
        rig.daemon.stop()
    }

    @Test func withoutAWatcherNothingBreaksAndQuitStopsTheDaemon() async throws {
        let rig = try await DaemonRig()
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        #expect(!rig.log.contains("tray"), "no watcher, nothing to say: \(rig.log)")
        let host = try rig.bus.connect(label: "host")
        defer { host.loop.sync { host.close() } }
        _ = try await host.call(.methodCall(
            destination: "org.kde.StatusNotifierItem-\(rig.daemon.pid)-1", path: "/io/github/ccrelay/CCRelay/Menu",
            interface: "com.canonical.dbusmenu", member: "Event", body: [.int32(8), .string("clicked"), .variant(.string("")), .uint32(0)]))
        #expect(await eventually(timeout: .seconds(20)) { !rig.daemon.isRunning }, "Quit CC Relay stops it: \(rig.log)")
        #expect(rig.daemon.wait() == 0)
    }

    @Test func everyIconTheTrayNamesShips() {
        let icons = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("resources/icons/hicolor/scalable/status").path
        for state in DaemonState.allCases {
            let name = TrayModel.look(
                TrayFacts(state: state, ip: "", remaining: nil, problem: "", unread: 0, urgent: false, recent: []), localize: .english).iconName
            #expect(FileManager.default.fileExists(atPath: "\(icons)/\(name).svg"), "\(state): \(name)")
        }
    }
}

/// What the watcher on the rig's bus has registered (for a failure message).
private func registered(_ rig: DaemonRig) -> String {
    let result = try? run("/usr/bin/dbus-send", ["--bus=" + rig.bus.address, "--print-reply", "--dest=org.kde.StatusNotifierWatcher",
                                                "/StatusNotifierWatcher", "org.freedesktop.DBus.Properties.Get",
                                                "string:org.kde.StatusNotifierWatcher", "string:RegisteredStatusNotifierItems"])
    return (result?.standardOutput ?? "") + (result?.standardError ?? "")
}

/// A real tray host: Debian's status-notifier-watcher and gtk-sni-tray-standalone
/// on a display of the test's own; the screenshot (in .build/debug/test-artifacts)
/// must show the state's icon, by its colour.
@Suite(.desktopBudget) struct TrayHostTests {
    static let artifacts = buildProductsDirectory.appendingPathComponent("test-artifacts").path

    @Test func aRealTrayHostShowsTheIconOfTheState() async throws {
        for tool in ["/usr/bin/status-notifier-watcher", "/usr/bin/gtk-sni-tray-standalone"] {
            try #require(FileManager.default.isExecutableFile(atPath: tool), "\(tool) is missing: scripts/bootstrap installs it")
        }
        try FileManager.default.createDirectory(atPath: Self.artifacts, withIntermediateDirectories: true)
        let display = try PrivateDisplay()
        let rig = try await DaemonRig(extraConfig: "auto-relogin = false")
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        let environment = rig.bus.environment.merging(["DISPLAY": display.name, "GDK_BACKEND": "x11", "NO_AT_BRIDGE": "1"]) { $1 }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tray-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let watcher = try ChildProcess("/usr/bin/status-notifier-watcher", [], environment: environment,
                                       outputFiles: (folder + "/watcher.out", folder + "/watcher.err"))
        defer { watcher.stop() }
        #expect(try await rig.bus.waitForName("org.kde.StatusNotifierWatcher"))
        let host = try ChildProcess("/usr/bin/gtk-sni-tray-standalone", ["--top", "--size", "48"], environment: environment,
                                    outputFiles: (folder + "/tray.out", folder + "/tray.err"))
        defer { host.stop() }
        let blue = (28, 110, 212), red = (198, 40, 40)
        var shot = try display.screenshot(savingTo: Self.artifacts + "/tray-online.png")
        #expect(await eventually(timeout: .seconds(30), interval: .milliseconds(500)) {
            shot = (try? display.screenshot(savingTo: Self.artifacts + "/tray-online.png")) ?? shot
            return shot.count(red: blue.0, green: blue.1, blue: blue.2) > 200
        }, "the online icon (blue) in \(Self.artifacts)/tray-online.png; registered: \(registered(rig)); \(rig.log)")
        #expect(shot.count(red: red.0, green: red.1, blue: red.2) < 50)

        try rig.sim.control("POST", "kick")
        // Not too often: xwd grabs the X server while it copies the screen, and the host must draw.
        #expect(await eventually(timeout: .seconds(20), interval: .milliseconds(500)) {
            shot = (try? display.screenshot(savingTo: Self.artifacts + "/tray-logged-out.png")) ?? shot
            return shot.count(red: red.0, green: red.1, blue: red.2) > 200 && shot.count(red: blue.0, green: blue.1, blue: blue.2) < 50
        }, "the logged-out icon (red) replaces it: \(Self.artifacts)/tray-logged-out.png")
        // The host's and the watcher's logs go with the screenshots.
        for log in ["tray.err", "watcher.err"] {
            try? FileManager.default.removeItem(atPath: Self.artifacts + "/" + log)
            try? FileManager.default.copyItem(atPath: folder + "/" + log, toPath: Self.artifacts + "/" + log)
        }
        try? FileManager.default.removeItem(atPath: folder)
    }
}

/// A terminal (`x-terminal-emulator` first in `path`) that runs what follows
/// `-e` without a screen, its words and output kept beside it; removed when released.
final class FakeTerminal: Sendable {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-terminal-\(UUID().uuidString)").path

    init() throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try writeExecutable("""
            #!/bin/sh
            printf '%s\\n' "$@" > "\(folder)/arguments"
            [ "$1" = -e ] && shift
            exec "$@" > "\(folder)/output" 2>&1 < /dev/null
            """, to: folder + "/x-terminal-emulator")
    }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    /// `PATH` with this terminal first.
    var path: String { folder + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin") }
    /// What the command in it printed.
    func output() -> String { (try? String(contentsOfFile: folder + "/output", encoding: .utf8)) ?? "" }
    /// The words it was started with.
    func arguments() -> String { (try? String(contentsOfFile: folder + "/arguments", encoding: .utf8)) ?? "(the terminal did not run)" }
}
