import Foundation
import TestSupport
import Testing

/// `ccrelay setup` on a Srun (深澜) network (issue 32.5): the portal an
/// anonymous request is redirected to is found and offered, the password
/// goes to the keyring, the trial speaks Srun, and the file written parses
/// with `protocol = srun` and its `[srun]` keys. The simulator's outside
/// face plays the campus's interception: `[::ffff:127.0.0.1]` is not its own
/// address to it, so a GET there is redirected to the portal.
extension SetupTests {
    static let srunUser = "2024000001"
    static let srunPassword = "s3cret pw!"

    /// A Srun portal (ac_id 5) and the URL an anonymous request to the outside goes to.
    static func srunPortal() throws -> (sim: CCSimProcess, outside: String) {
        let sim = try CCSimProcess(tls: false, ["--protocol", "srun", "--ac-id", "5", "--user", "\(srunUser):\(srunPassword)"])
        let port = sim.url.split(separator: ":").last.map { String($0.dropLast()) } ?? ""
        return (sim, "http://[::ffff:127.0.0.1]:\(port)/generate_204")
    }

    @Test func aSrunPortalTheNetworkShowsIsSetUpInOneCommand() async throws {
        let (sim, outside) = try Self.srunPortal()
        let bus = try busThatStartsTheDaemon()
        let keyring = try await GnomeKeyring(on: bus)
        let result = try setup(["--discover-from", outside, "--user", Self.srunUser, "--password-stdin", "--yes"], bus: bus,
                               input: Self.srunPassword + "\n")
        let out = result.standardOutput
        #expect(result.status == 0, "\(out)\n\(result.standardError)")
        #expect(out.contains("Found a Srun (深澜) portal at \(sim.url) (ac_id 5)."), "\(out)")
        #expect(out.contains("this portal is plain http") && out.contains("The portal logged you in (outside access for 127.0.0.1); logged out again."),
                "\(out)")
        #expect(out.contains("Saved the campus password of \(Self.srunUser) in your keyring."), "\(out)")
        let text = try String(contentsOfFile: configPath, encoding: .utf8)
        #expect(text.contains("[server]\nprotocol = srun\nurl = \(sim.url)\n") && text.contains("[srun]\nac-id = 5\n")
                && text.contains("[auth]\nuser = \(Self.srunUser)\n"), "\(text)")
        #expect(!text.contains("certificate") && !text.contains(Self.srunPassword), "\(text)")
        let check = try run(DaemonRig.ccrelay, ["config", "check", "--config", configPath])
        #expect(check.status == 0 && check.standardError.contains("plain http"), "\(check.standardOutput)\(check.standardError)")
        // The trial logged out again; the daemon, started through the bus with the keyring's password, is online.
        let status = { (try? run(DaemonRig.ccrelay, ["status", "--json"], environment: bus.environment).standardOutput) ?? "" }
        #expect(await eventually(timeout: .seconds(30)) { status().contains("\"state\":\"online\"") },
                "\(status()) \((try? String(contentsOfFile: daemonLog, encoding: .utf8)) ?? "")")
        #expect(try sim.sessions().count == 1)
        _ = try? run(DaemonRig.ccrelay, ["logout"], environment: bus.environment)
        withExtendedLifetime(keyring) {}
        try? FileManager.default.removeItem(atPath: folder)
    }

    @Test func aWrongPasswordAtASrunPortalIsSaidInThePortalsWordsAndNothingIsWritten() throws {
        let (sim, _) = try Self.srunPortal()
        let base = ["--protocol", "srun", "--server", sim.url, "--ac-id", "5", "--user", Self.srunUser, "--password-stdin", "--yes",
                    "--no-autostart"]
        let wrong = try setup(base, input: "not it\n")
        #expect(wrong.status == 1, "\(wrong.standardOutput)\n\(wrong.standardError)")
        #expect(wrong.standardError.contains("E2553: Password is error."), "\(wrong.standardError)")
        #expect(!wrong.standardOutput.contains("Looking for the campus portal"), "the portal was given: nothing to look for")
        #expect(!FileManager.default.fileExists(atPath: configPath))
        // Values the protocol does not take are refused before anything is asked.
        for (options, said) in [(["--domain", "@c mcc"], "--domain"), (["--ac-id", "five"], "--ac-id"), (["--hmd5", "sha1"], "--hmd5"),
                                (["--certificate", TestPKI.shared.clientCertificate], "--certificate goes with --protocol cc1")] {
            let refused = try setup(base + options, input: Self.srunPassword + "\n")
            #expect(refused.status == 2 && refused.standardError.contains(said), "\(options): \(refused.standardError)")
        }
        let cc1 = try setup(["--protocol", "cc1", "--server", sim.url, "--ac-id", "5", "--yes"])
        #expect(cc1.status == 2 && cc1.standardError.contains("--ac-id goes with --protocol srun"), "\(cc1.standardError)")
        #expect(!FileManager.default.fileExists(atPath: configPath))
        #expect(try sim.sessions().isEmpty)
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// On a terminal: the portal found is offered, and Enter takes every answer it gave.
    @Test func onATerminalThePortalFoundIsOfferedAndEnterTakesIt() async throws {
        let (sim, outside) = try Self.srunPortal()
        let bus = try PrivateBus()
        let keyring = try await GnomeKeyring(on: bus)
        let driver = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/pty_drive.py").path
        let steps: [(String, String)] = [
            ("Login protocol: cc1", ""), ("Srun portal URL (for example http://10.0.0.55/) [\(sim.url)]: ", ""), ("ac_id", ""),
            ("Domain suffix", ""), ("User name at the portal", Self.srunUser), ("Campus password for \(Self.srunUser)", Self.srunPassword),
        ]
        let result = try setup([driver] + steps.flatMap { ["--step", "\($0.0)=>\($0.1)"] }
            + ["--", DaemonRig.ccrelay, "setup", "--discover-from", outside, "--no-autostart"], bus: bus, asIs: true)
        #expect(result.status == 0, "\(result.standardOutput)\n\(result.standardError)")
        #expect(result.standardOutput.contains("Found a Srun (深澜) portal at \(sim.url) (ac_id 5).\r\nLogin protocol: cc1 (a CC server, with a certificate or a password) or srun (a Srun 深澜 portal) [srun]: "),
                "the protocol found is the default: \(result.standardOutput)")
        #expect(result.standardOutput.contains("[5]: "), "the ac_id found is the default: \(result.standardOutput)")
        let text = try String(contentsOfFile: configPath, encoding: .utf8)
        #expect(text.contains("protocol = srun\nurl = \(sim.url)\n") && text.contains("ac-id = 5\n") && !text.contains("domain"), "\(text)")
        #expect(!result.standardOutput.contains(Self.srunPassword), "the password is not echoed")
        withExtendedLifetime(keyring) {}
        try? FileManager.default.removeItem(atPath: folder)
    }
}
