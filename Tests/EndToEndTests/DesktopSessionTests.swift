import Foundation
import TestSupport
import Testing

/// A real XFCE session (issue 21): `xfce4-session` on a display and session
/// bus of its own (dbus-run-session, as startxfce4 makes one) runs the
/// package's XDG autostart entry, the daemon gets online, and when the user
/// logs out the daemon logs out of the campus network (logout-on-exit) and
/// ends — on a shared lab PC the next student must not inherit the session.
@Suite(.desktopBudget) struct DesktopSessionTests {
    @Test func theXfceSessionStartsTheDaemonAndItsLogoutEndsIt() async throws {
        for tool in ["/usr/bin/xfce4-session", "/usr/bin/xfce4-session-logout", "/usr/bin/dbus-run-session"] {
            try #require(FileManager.default.isExecutableFile(atPath: tool), "\(tool) is missing: scripts/bootstrap installs it")
        }
        let display = try PrivateDisplay()
        let sim = try CCSimProcess(["--interval", "2", "--timeout", "30"])
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-xfce-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: home) }
        for folder in ["/config/ccrelay", "/config/autostart", "/run"] {
            try FileManager.default.createDirectory(atPath: home + folder, withIntermediateDirectories: true)
        }
        chmod(home + "/run", 0o700)
        let configPath = home + "/config/ccrelay/ccrelay.conf"
        try sim.configuration(extra: "[keepalive]\nlogout-on-exit = true").write(toFile: configPath, atomically: true, encoding: .utf8)
        chmod(configPath, 0o600)
        // The package's entry as packaging/install writes it, with the build's programs.
        let packaging = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("packaging/io.github.ccrelay.CCRelay-autostart.desktop.in").path
        try (try String(contentsOfFile: packaging, encoding: .utf8)).replacingOccurrences(of: "@bindir@", with: buildProductsDirectory.path)
            .write(toFile: home + "/config/autostart/io.github.ccrelay.CCRelay-autostart.desktop", atomically: true, encoding: .utf8)
        let environment = [
            "PATH": "/usr/bin:/bin", "DISPLAY": display.name, "HOME": home, "XDG_CONFIG_HOME": home + "/config",
            "XDG_STATE_HOME": home + "/state", "XDG_CACHE_HOME": home + "/cache", "XDG_RUNTIME_DIR": home + "/run",
            "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/ccrelay-no-system-bus", "NO_AT_BRIDGE": "1",
        ]
        let session = try ChildProcess("/usr/bin/dbus-run-session", ["--", "/usr/bin/xfce4-session"], environment: environment,
                                       outputFiles: (home + "/session.out", home + "/session.log"))
        defer { session.stop() }
        func sessionLog() -> String { (try? String(contentsOfFile: home + "/session.log", encoding: .utf8)) ?? "" }
        // xfce4-session starts the autostart entries after its failsafe clients (which are mostly not installed here).
        var daemon: pid_t?
        #expect(await eventually(timeout: .seconds(60), interval: .milliseconds(500)) {
            daemon = Self.process(commandLineContaining: configPath)
            return daemon != nil && ((try? sim.sessions()) ?? []).contains { ($0["reports"] as? [Any])?.isEmpty == false }
        }, "the autostart entry's daemon got online: \(sessionLog())")
        let pid = try #require(daemon)
        defer { kill(pid, SIGKILL) }
        let bus = try #require(Self.environment(of: pid)["DBUS_SESSION_BUS_ADDRESS"])
        let logout = try run("/usr/bin/xfce4-session-logout", ["--logout", "--fast"],
                             environment: environment.merging(["DBUS_SESSION_BUS_ADDRESS": bus]) { $1 })
        #expect(logout.status == 0, "\(logout.standardError)")
        #expect(await eventually(timeout: .seconds(20)) { !session.isRunning }, "the session ended")
        // The bus went with the session; with no logind to ask, the daemon waits a short grace for it, then ends.
        #expect(await eventually(timeout: .seconds(30), interval: .milliseconds(200)) { kill(pid, 0) != 0 },
                "no ccrelay daemon outlives the session: \(sessionLog())")
        #expect(try sim.sessions().first?["reason"] as? String == "logout", "and it logged out first: \(sessionLog())")
    }

    /// The first process whose command line contains `text`.
    static func process(commandLineContaining text: String) -> pid_t? {
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry), let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { continue }
            let words = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            if words.first?.hasSuffix("ccrelay-daemon") == true && words.contains(text) { return pid }
        }
        return nil
    }

    static func environment(of pid: pid_t) -> [String: String] {
        let data = FileManager.default.contents(atPath: "/proc/\(pid)/environ") ?? Data()
        var result: [String: String] = [:]
        for entry in data.split(separator: 0) {
            let text = String(decoding: entry, as: UTF8.self)
            guard let equals = text.firstIndex(of: "=") else { continue }
            result[String(text[..<equals])] = String(text[text.index(after: equals)...])
        }
        return result
    }
}
