import Foundation
import TestSupport
import Testing

/// The daemon process over its life: restarts for a changed configuration
/// leave nothing behind, and a reader of its log that goes away does not kill it.
@Suite(.desktopBudget) struct ProcessLifeTests {
    /// The descriptors a process holds, by what they are (socket, pipe, file).
    static func descriptors(_ pid: pid_t) -> [String] {
        let folder = "/proc/\(pid)/fd"
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted().map {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + $0)) ?? "?"
        }
    }

    /// Issue 33.7: `ccrelay daemon` becomes the daemon before it starts any
    /// thread. A Swift task's first hop starts libdispatch's workers, whose
    /// raised priority the system unit's sandbox refuses: three "Failed to
    /// set thread priority" lines in its journal at every start. strace sees
    /// every thread the CLI makes before its exec.
    @Test(arguments: [["daemon"], ["--system", "daemon"], ["--system=lab", "daemon"]])
    func theCommandBecomesTheDaemonBeforeAnyThread(_ command: [String]) throws {
        let trace = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-trace-\(UUID().uuidString)").path
        defer { unlink(trace) }
        let ccrelay = buildProductsDirectory.appendingPathComponent("ccrelay").path
        let missing = trace + ".absent.conf"
        // No bus to be had: the daemon prints its problems and exits (with a bus it would wait, unconfigured).
        let result = try run("/usr/bin/timeout", ["60", "/usr/bin/strace", "-f", "-qq", "-e", "trace=clone,clone3,execve", "-o", trace, ccrelay]
                                 + command + ["--config", missing],
                             environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(trace).no-bus", "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(trace).no-bus"])
        #expect(result.status == 1, "\(result.standardError)")
        #expect(result.standardError.contains(missing), "the daemon reports the missing file: \(result.standardError)")
        let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
        let exec = try #require(lines.firstIndex { $0.contains("execve(") && $0.contains("ccrelay-daemon") }, "\(lines)")
        let threads = lines[..<exec].filter { $0.contains("clone") && $0.contains("CLONE_THREAD") }
        #expect(threads.isEmpty, "threads started before the exec: \(threads)")
    }

    @Test func twentyRestartsForAChangedConfigurationLeakNoDescriptorAndNoConnection() async throws {
        let rig = try await DaemonRig(simulator: ["--interval", "1", "--timeout", "8"])
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        let pid = rig.daemon.pid
        let original = try String(contentsOfFile: rig.configPath, encoding: .utf8)
        func restarts() -> Int { rig.log.components(separatedBy: "carrying on with the session").count - 1 }
        var counts: [Int] = []
        for change in 1...20 {
            try original.replacingOccurrences(of: "warn-before = 6", with: "warn-before = \(change % 2 == 0 ? 6 : 5)")
                .replacingOccurrences(of: "[keepalive]", with: "[keepalive]\n# change \(change)")
                .write(toFile: rig.configPath, atomically: true, encoding: .utf8)
            chmod(rig.configPath, 0o600)
            #expect(await eventually(timeout: .seconds(20)) { restarts() >= change }, "restart \(change): \(rig.log)")
            // Once it has sent a keep-alive since, its connection to the server is open again.
            let reports = rig.acceptedReports()
            #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() > reports }, "\(rig.log)")
            counts.append(Self.descriptors(pid).count)
        }
        #expect(rig.daemon.pid == pid && rig.daemon.isRunning)
        let sockets = Self.descriptors(pid).filter { $0.hasPrefix("socket:") }.count
        // The first restart may settle what the first start opened lazily; after it, nothing grows.
        #expect(counts.last! <= counts[1], "descriptors after each restart: \(counts); now: \(Self.descriptors(pid))")
        #expect(sockets <= 8, "sockets: \(Self.descriptors(pid))")
        #expect(try rig.sim.sessions().count == 1, "no new login")
    }

    @Test func aReaderOfTheLogThatGoesAwayDoesNotKillTheDaemon() async throws {
        // `ccrelay daemon 2>&1 | head -c 1`: the reader takes one byte and leaves.
        let rig = try await DaemonRig(extraConfig: "logout-on-exit = true",
                                      launcher: ["/bin/sh", "-c", "\"$@\" 2>&1 | head -c 1 >/dev/null", "sh"])
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 })
        let daemon = try #require(await findDaemon(configPath: rig.configPath))
        defer { kill(daemon, SIGKILL) }
        // A broken edit makes it log (to the pipe nobody reads any more).
        try "[server]\nurl = nonsense\n".write(toFile: rig.configPath, atomically: true, encoding: .utf8)
        chmod(rig.configPath, 0o600)
        let reports = rig.acceptedReports()
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() > reports }, "it keeps the session alive")
        #expect(kill(daemon, 0) == 0, "the daemon is alive")
        kill(daemon, SIGTERM)
        #expect(await eventually(timeout: .seconds(20)) { kill(daemon, 0) != 0 }, "it stops on SIGTERM")
        #expect(try rig.sim.sessions().first?["reason"] as? String == "logout", "and logged out first")
    }

    /// issue 22: an upgrade replaces the daemon's program while it runs (dpkg writes the new
    /// file and renames it over the old). The daemon runs the new one — the same process, at a
    /// quiet moment — and carries on with its session.
    @Test func anUpgradeReplacingTheProgramIsRunAndTheSessionCarriesOn() async throws {
        let prefix = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-upgrade-\(UUID().uuidString)").path + "/usr"
        defer { try? FileManager.default.removeItem(atPath: (prefix as NSString).deletingLastPathComponent) }
        try FileManager.default.createDirectory(atPath: prefix + "/bin", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: prefix + "/libexec/ccrelay", withIntermediateDirectories: true)
        let built = buildProductsDirectory.path
        // Copied by cp, in a process of its own: a file this process opened for writing could be
        // inherited by a child another test spawns meanwhile, and exec would then fail (ETXTBSY).
        func copy(_ from: String, _ to: String) throws {
            let copied = try run("/bin/cp", [from, to])
            guard copied.status == 0 else { throw TestSetupError("cp: \(copied.standardError)") }
        }
        try copy(built + "/ccrelay", prefix + "/bin/ccrelay")
        let program = prefix + "/libexec/ccrelay/ccrelay-daemon"
        try copy(built + "/ccrelay-daemon", program)
        // The installed copy, in place of the build's (the rig passes the build's path first).
        let rig = try await DaemonRig(launcher: ["/bin/sh", "-c", "shift; exec \"$0\" \"$@\"", prefix + "/bin/ccrelay"])
        try #require(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "log: \(rig.log)")
        let pid = rig.daemon.pid
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe") == program)
        // The package manager's way: the new file beside the old, renamed over it.
        try copy(built + "/ccrelay-daemon", program + ".dpkg-new")
        #expect(rename(program + ".dpkg-new", program) == 0)
        #expect(await eventually(timeout: .seconds(20)) { rig.log.contains("was replaced (an upgrade); restarting with it") }, "\(rig.log)")
        #expect(await eventually(timeout: .seconds(20)) { rig.log.contains("carrying on with the session") }, "\(rig.log)")
        #expect(rig.daemon.pid == pid && rig.daemon.isRunning, "the same process")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe") == program, "running the new file, not the deleted one")
        let reports = rig.acceptedReports()
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() > reports }, "keep-alives go on")
        #expect(try rig.sim.sessions().count == 1, "no new login")
    }

    /// The pid of the `ccrelay-daemon` that runs with `configPath`.
    func findDaemon(configPath: String) async -> pid_t? {
        var found: pid_t?
        _ = await eventually(timeout: .seconds(10)) {
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
                guard let pid = pid_t(entry),
                    let command = try? String(contentsOfFile: "/proc/\(entry)/cmdline", encoding: .utf8)
                else { continue }
                if command.contains("ccrelay-daemon") && command.contains(configPath) { found = pid }
            }
            return found != nil
        }
        return found
    }
}
