import Foundation
import TestSupport
import Testing

/// A student behind a Srun (深澜) portal (issue 32), end to end: the real
/// daemon against `ccsim --protocol srun` (which checks every login as a
/// portal does), a private session bus and dunst. The rules (relogin timing,
/// fights, rate limits) are proven on the core's virtual clock
/// (SrunSessionTests); here one smoke test each.
@Suite(.desktopBudget) struct SrunDaemonTests {
    static let user = "2024000001"
    static let password = "s3cret pw!"

    /// The daemon, a Srun portal and dunst.
    final class SrunRig: Sendable {
        let bus: PrivateBus
        let dunst: Dunst
        let sim: CCSimProcess
        let daemon: ChildProcess
        let folder: String
        let configPath: String
        let logPath: String
        let environment: [String: String]

        /// With `https`, the portal serves the test PKI's certificate and the configuration names its CA.
        init(simulator: [String] = [], extraConfig: String = "", https: Bool = false, beforeStart: (CCSimProcess) throws -> Void = { _ in }) async throws {
            bus = try PrivateBus()
            dunst = try await Dunst(on: bus)
            sim = try CCSimProcess(tls: https, clientCertificates: false,
                                   ["--protocol", "srun", "--user", "\(SrunDaemonTests.user):\(SrunDaemonTests.password)"] + simulator)
            try beforeStart(sim)
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-srun-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try (SrunDaemonTests.password + "\n").write(toFile: folder + "/password", atomically: true, encoding: .utf8)
            chmod(folder + "/password", 0o600)
            configPath = folder + "/ccrelay.conf"
            try """
                [server]
                protocol = srun
                url = \(sim.url)
                \(https ? "ca-file = \(TestPKI.shared.caCertificate)" : "")
                [auth]
                user = \(SrunDaemonTests.user)
                password-file = \(folder)/password
                [srun]
                ac-id = auto
                poll = 10
                [probe]
                mode = off
                \(extraConfig)
                """.write(toFile: configPath, atomically: true, encoding: .utf8)
            chmod(configPath, 0o600)
            logPath = folder + "/daemon.log"
            var environment = bus.environment
            environment["XDG_STATE_HOME"] = folder + "/state"
            environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=/nonexistent/ccrelay-no-system-bus"
            self.environment = environment
            daemon = try ChildProcess(DaemonRig.ccrelay, ["daemon", "--config", configPath], environment: environment,
                                      outputFiles: (folder + "/daemon.out", logPath))
        }

        var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

        func cli(_ arguments: [String]) throws -> CommandResult { try run(DaemonRig.ccrelay, arguments, environment: environment) }

        func status() -> [String: Any] {
            let output = (try? cli(["status", "--json"]).standardOutput) ?? ""
            return (try? JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any]) ?? [:]
        }

        /// The portal's sessions of the account.
        func sessions() -> [[String: Any]] { ((try? sim.control("GET", "sessions")) as? [[String: Any]]) ?? [] }

        /// Logins the portal was sent (its request log keeps the parameter names, never the password).
        func logins() -> Int {
            let log = ((try? sim.control("GET", "requests")) as? [[String: Any]]) ?? []
            return log.filter { ($0["path"] as? String)?.hasSuffix("srun_portal") == true && (($0["params"] as? [String]) ?? []).contains("password") }
                .count
        }
    }

    @Test func logsInShowsTheAccountAndWinsBackASessionThePortalEnded() async throws {
        let rig = try await SrunRig(simulator: ["--ac-id", "5"])
        defer { rig.daemon.stop() }
        #expect(await eventually(timeout: .seconds(30)) { rig.status()["state"] as? String == "online" }, "\(rig.log)")
        #expect(rig.sessions().count == 1 && rig.logins() == 1)
        let status = rig.status()
        #expect(status["protocol"] as? String == "srun", "\(status)")
        let account = status["account"] as? [String: Any]
        #expect(account?["devices"] as? Int == 1 && account?["online_ip"] as? String == "127.0.x.x", "\(status)")
        #expect(!(try rig.cli(["status"]).standardOutput.contains(Self.password)))

        // The portal ends the session without a word: said, then won back.
        try rig.sim.control("DELETE", "sessions", ["account": Self.user])
        #expect(await eventually(timeout: .seconds(30)) { rig.logins() == 2 && rig.status()["state"] as? String == "online" }, "\(rig.log)")
        let shown = try rig.dunst.closeAllAndReadHistory().map { $0.category }
        #expect(shown.contains("network.disconnected") && shown.contains("network.connected"), "logged out, then back online: \(shown)")
        let timeline = try rig.cli(["timeline"]).standardOutput
        #expect(timeline.contains("online → logged-out") && timeline.contains("logged-out → logging-in"), "\(timeline)")
        #expect(!rig.log.contains(Self.password), "the password is never logged")
    }

    @Test func threeEndsWithinTenMinutesAreAFight() async throws {
        let rig = try await SrunRig()
        defer { rig.daemon.stop() }
        for round in 1...3 {
            #expect(await eventually(timeout: .seconds(30)) { rig.logins() == round && rig.status()["state"] as? String == "online" },
                    "\(round): \(rig.log)")
            try rig.sim.control("DELETE", "sessions", ["account": Self.user])
        }
        #expect(await eventually(timeout: .seconds(30)) {
            (try? rig.cli(["history", "--json", "--limit", "1"]).standardOutput)?.contains("another device, or the portal, keeps ending it") == true
        }, "\(rig.log)")
        #expect(rig.status()["state"] as? String == "logged-out" && rig.logins() == 3, "no fourth login")
        // The user's own word starts afresh.
        _ = try rig.cli(["login"])
        #expect(await eventually(timeout: .seconds(30)) { rig.status()["state"] as? String == "online" && rig.logins() == 4 }, "\(rig.log)")
    }

    @Test func aRefusalIsSaidInTheNamedCodeWithThePortalsWordsAndNeverLoops() async throws {
        let rig = try await SrunRig(beforeStart: { sim in
            try sim.control("POST", "next-login", ["ecode": "E2620", "error_msg": "E2620: You are already online."])
        })
        defer { rig.daemon.stop() }
        #expect(await eventually(timeout: .seconds(30)) { rig.status()["last_error_code"] as? String == "online-elsewhere" }, "\(rig.log)")
        #expect((rig.status()["last_error"] as? String)?.contains("E2620: You are already online.") == true, "\(rig.status())")
        #expect(rig.status()["state"] as? String == "logged-out")
        // No login loop: SessionTests.permanentRefusalsAreNeverRetried (online elsewhere among them), on the virtual clock.
        #expect(rig.logins() == 1)
    }

    @Test func aCaptchaIsSaidOnceAndALoginFromTheBrowserIsCarriedOn() async throws {
        let rig = try await SrunRig(beforeStart: { sim in try sim.control("POST", "captcha", ["on": true]) })
        defer { rig.daemon.stop() }
        #expect(await eventually(timeout: .seconds(30)) { rig.status()["last_error_code"] as? String == "captcha-required" }, "\(rig.log)")
        #expect(rig.logins() == 0, "no login goes to a portal that wants a captcha")
        // The student logs in through the portal's page (the same address).
        try rig.sim.control("POST", "captcha", ["on": false])
        try rig.sim.control("POST", "sessions", ["account": Self.user, "ip": "127.0.0.1"])
        #expect(await eventually(timeout: .seconds(40)) { rig.status()["state"] as? String == "online" }, "\(rig.log)")
        #expect(rig.logins() == 0, "online with no login of its own")
    }

    @Test(arguments: ["portal", "dm"])
    func logoutEndsThePortalsSession(_ method: String) async throws {
        let rig = try await SrunRig(extraConfig: "[srun]\nlogout = \(method)")
        defer { rig.daemon.stop() }
        #expect(await eventually(timeout: .seconds(30)) { rig.status()["state"] as? String == "online" }, "\(rig.log)")
        let logout = try rig.cli(["logout"])
        #expect(logout.status == 0, "\(logout.standardError)")
        #expect(await eventually(timeout: .seconds(20)) { rig.sessions().isEmpty }, "the portal's session ended: \(rig.log)")
        #expect(rig.status()["state"] as? String == "offline")
    }

    @Test func anHTTPSPortalIsVerifiedWithTheCampusCA() async throws {
        let rig = try await SrunRig(https: true)
        defer { rig.daemon.stop() }
        #expect(rig.sim.url.hasPrefix("https://"))
        #expect(await eventually(timeout: .seconds(30)) { rig.status()["state"] as? String == "online" }, "\(rig.log)")
        let check = try rig.cli(["config", "check", "--config", rig.configPath])
        #expect(check.status == 0 && !check.standardError.contains("read the password"), "no plain-http warning: \(check.standardError)")
        // Without the campus CA the portal is not trusted, and nothing is sent to it.
        let untrusted = try String(contentsOfFile: rig.configPath, encoding: .utf8)
            .replacingOccurrences(of: "ca-file = \(TestPKI.shared.caCertificate)", with: "")
        let other = rig.configPath + ".untrusted"
        try untrusted.write(toFile: other, atomically: true, encoding: .utf8)
        chmod(other, 0o600)
        let logins = rig.logins()
        let trial = try run(buildProductsDirectory.appendingPathComponent("ccrelay-daemon").path, ["--try", "--config", other],
                            environment: rig.environment, input: SrunDaemonTests.password + "\n")
        #expect(trial.status == 1 && (trial.standardError.contains("not from a trusted authority") || trial.standardError.contains("verified")),
                "\(trial.standardError)")
        #expect(rig.logins() == logins, "no login went to a portal that was not verified")
    }
}
