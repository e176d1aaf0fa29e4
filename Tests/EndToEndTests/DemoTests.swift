import Foundation
import TestSupport
import Testing

/// The README's first developer command: the scripted demo, headless (a private bus
/// and the terminal sink), its transcript checked step by step; Ctrl-C leaves
/// nothing behind.
@Suite(.desktopBudget) struct DemoTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/ccrelay-demo").path
    /// No session bus to find: the demo brings its own.
    static let environment = ["CCRELAY_DEMO_BIN": buildProductsDirectory.path,
                              "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/ccrelay-demo-test", "LANG": "C.UTF-8"]

    @Test func theScenarioRunsEveryStepAndCleansUp() throws {
        let result = try run(Self.script, [], environment: Self.environment)
        let transcript = result.standardOutput
        #expect(result.status == 0, "\(transcript)\n\(result.standardError)")
        let expected = [
            "a private bus and a terminal sink print each bubble",
            "== 3. Starting the ccrelay daemon", "$ ccrelay status → online",
            "== 5. The campus sends a notice", "│ 网络维护通知 Network maintenance", "badge 1",
            "== 6. The server stops answering", "│ Keep-alive failed", "$ ccrelay status → failing",
            "== 7. The server answers again", "│ Back online", "── bubble 2 closed",
            "== 8. The server kicks the session", "│ Logged out of the campus network", "$ ccrelay status → logged-out, badge 3",
            "$ ccrelay badge → 3 unread alerts", "$ ccrelay badge clear → Cleared the badge: 3 alerts acknowledged.",
            "$ ccrelay status → logged-out, badge 0", "== done",
        ]
        Self.expectInOrder(expected, in: transcript)
        let directory = try #require(transcript.firstMatch(of: /working in (\S+)/)?.1)
        #expect(!FileManager.default.fileExists(atPath: String(directory)), "the temporary directory is removed")
    }

    /// Records an issue unless every line of `expected` is in `transcript`, in that order.
    static func expectInOrder(_ expected: [String], in transcript: String) {
        var rest = Substring(transcript)
        for line in expected {
            guard let found = rest.range(of: line) else {
                Issue.record("missing, or out of order: '\(line)'\n\(transcript)")
                return
            }
            rest = rest[found.upperBound...]
        }
    }

    /// issue 32: `ccrelay demo --srun` — the Srun portal's scene: the login,
    /// the portal ends the session (won back), the password refused (no loop).
    @Test func theSrunSceneRunsEveryStepAndEndsAsNarrated() throws {
        let result = try run(Self.script, ["--srun"], environment: Self.environment)
        let transcript = result.standardOutput
        #expect(result.status == 0, "\(transcript)\n\(result.standardError)")
        let expected = [
            "== 1. Starting the campus Srun (深澜) portal simulator", "== 2. Starting the ccrelay daemon: it finds the portal's ac_id",
            "$ ccrelay status → online, 1 device on the account, badge 0",
            "== 3. The portal ends the session without a word", "│ Logged out of the campus network",
            "$ ccrelay status → online, 1 device on the account, badge 1",
            "== 4. The password changed at the campus: the portal answers E2553",
            "$ ccrelay status → logged-out, last error bad-credentials, badge 3", "the portal was sent 3 logins in all",
            "$ ccrelay badge → 3 unread alerts", "$ ccrelay status → logged-out, last error bad-credentials, badge 0", "== done",
        ]
        Self.expectInOrder(expected, in: transcript)
        // The refusal's bubble carries the portal's own words (the sink prints it as it comes).
        let refused = transcript.components(separatedBy: "== 4.").last ?? ""
        #expect(refused.contains("│ Campus login refused") && refused.contains("E2553: Password is error."), "\(transcript)")
        #expect(!transcript.contains("s3cret"), "the password never shows")
        let directory = try #require(transcript.firstMatch(of: /working in (\S+)/)?.1)
        #expect(!FileManager.default.fileExists(atPath: String(directory)), "the temporary directory is removed")
        let unknown = try run(Self.script, ["--cc2"], environment: Self.environment)
        #expect(unknown.status == 2 && unknown.standardError.contains("unknown argument"), "\(unknown.standardError)")
    }

    @Test func ctrlCStopsEverythingAndLeavesNothingRunning() async throws {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-demo-\(UUID().uuidString)").path
        let demo = try ChildProcess(Self.script, [], environment: Self.environment, outputFiles: (output, output + ".err"),
                                    ownProcessGroup: true)
        func transcript() -> String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }
        #expect(eventuallyBlocking(timeout: .seconds(30)) { transcript().contains("== 4.") }, "\(transcript())")
        let directory = try #require(transcript().firstMatch(of: /working in (\S+)/)?.1).description
        // Ctrl-C on a terminal: SIGINT to the foreground job's whole process group.
        kill(-demo.pid, SIGINT)
        #expect(demo.wait() == 130)
        #expect(transcript().contains("== stopped"))
        #expect(!FileManager.default.fileExists(atPath: directory), "the temporary directory is removed")
        // No process still runs with the demo's directory on its command line (ccsim, the daemon, the bus).
        let left = try run("/usr/bin/pgrep", ["-f", directory])
        #expect(left.standardOutput.isEmpty, "still running: \(left.standardOutput)")
    }

    /// issue 31, item 11: on a machine where ccrelay is installed, the user's
    /// daemon is activatable (its D-Bus service file where a standard session
    /// bus looks: `$XDG_DATA_HOME` and `$XDG_DATA_DIRS`, and, with a desktop,
    /// on the desktop's bus). The demo must never start it — neither headless
    /// (its private bus) nor inside a desktop session — and never touch the
    /// user's home. The demo's daemon here takes 2 s to own its name (a busy
    /// machine), so every early `ccrelay status` of the demo would start the
    /// activatable one: the race of the report, made certain.
    @Test(arguments: [false, true])
    func theDemoNeverStartsTheUsersOwnDaemonNorTouchesTheirHome(desktop: Bool) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-demo-home-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let home = folder + "/home"
        let marker = folder + "/users-daemon-started"
        // The user's own configuration and journal folder, as an installed ccrelay left them.
        for sub in ["/.config/ccrelay", "/.local/state/ccrelay", "/.local/share/dbus-1/services", "/share/dbus-1/services", "/bin"] {
            try FileManager.default.createDirectory(atPath: (sub == "/share/dbus-1/services" || sub == "/bin" ? folder : home) + sub,
                                                    withIntermediateDirectories: true)
        }
        try "[server]\nurl = https://cc.campus.example/\n".write(toFile: home + "/.config/ccrelay/ccrelay.conf", atomically: true, encoding: .utf8)
        chmod(home + "/.config/ccrelay/ccrelay.conf", 0o600)
        // The installed package's activation file, pointing at a marker that records who started it.
        let usersDaemon = folder + "/bin/users-ccrelay"
        try writeExecutable("#!/bin/sh\necho \"started: HOME=$HOME $*\" >> '\(marker)'\nexit 1\n", to: usersDaemon)
        let activation = "[D-BUS Service]\nName=io.github.ccrelay.CCRelay\nExec=\(usersDaemon) daemon\n"
        for services in [home + "/.local/share/dbus-1/services", folder + "/share/dbus-1/services"] {
            try activation.write(toFile: services + "/io.github.ccrelay.CCRelay.service", atomically: true, encoding: .utf8)
        }
        // The programs of this build, the daemon slow to own its name.
        let programs = folder + "/bin"
        try writeExecutable("#!/bin/sh\n[ \"$1\" = daemon ] && sleep 2\nexec '\(buildProductsDirectory.path)/ccrelay' \"$@\"\n",
                            to: programs + "/ccrelay")
        try FileManager.default.createSymbolicLink(atPath: programs + "/ccsim", withDestinationPath: buildProductsDirectory.path + "/ccsim")
        let before = try Self.snapshot(home)

        var environment = ["CCRELAY_DEMO_BIN": programs, "LANG": "C.UTF-8", "HOME": home, "XDG_DATA_HOME": home + "/.local/share",
                           "XDG_CONFIG_HOME": home + "/.config", "XDG_STATE_HOME": home + "/.local/state",
                           "XDG_DATA_DIRS": folder + "/share:/usr/local/share:/usr/share",
                           "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/ccrelay-demo-test"]
        // A desktop: its bus can start the installed daemon, and a notification server shows the bubbles.
        let bus = desktop ? try PrivateBus(services: ["io.github.ccrelay.CCRelay": usersDaemon + " daemon"]) : nil
        var dunst: Dunst?
        if let bus { dunst = try await Dunst(on: bus) }
        if let bus { environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address }
        let result = try run(Self.script, [], environment: environment)
        #expect(result.status == 0, "\(result.standardOutput)\n\(result.standardError)")
        #expect(result.standardOutput.contains("$ ccrelay status → logged-out, badge 0"), "\(result.standardOutput)")
        let started = (try? String(contentsOfFile: marker, encoding: .utf8)) ?? ""
        #expect(started.isEmpty, "the demo started the user's own daemon: \(started)")
        #expect(try Self.snapshot(home) == before, "the user's home was touched")
        if let dunst {
            // The bubbles still reach the desktop's notification server.
            let shown = try dunst.closeAllAndReadHistory()
            #expect(shown.contains { $0.summary.contains("Logged out") }, "\(shown.map { $0.summary })")
        }
    }

    /// Every file and folder under `path`, with its size and modification time.
    static func snapshot(_ path: String) throws -> [String] {
        try FileManager.default.subpathsOfDirectory(atPath: path).sorted().map { sub in
            let attributes = try FileManager.default.attributesOfItem(atPath: path + "/" + sub)
            return "\(sub) \(attributes[.size] ?? 0) \(attributes[.modificationDate] ?? "")"
        }
    }
}
