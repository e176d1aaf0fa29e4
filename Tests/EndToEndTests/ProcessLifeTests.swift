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
