import Foundation
import TestSupport
import Testing

/// `ccrelay setup` (issue 13): from nothing to online in one command, the
/// login tried before anything is written, nothing written when it fails.
@Suite(.desktopBudget) struct SetupTests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-setup-\(UUID().uuidString)").path
    var configPath: String { folder + "/config/ccrelay/ccrelay.conf" }

    /// `ccrelay setup ARGUMENTS`, or with `asIs` the command ARGUMENTS (a driver that runs setup).
    func setup(_ arguments: [String], bus: PrivateBus? = nil, extraEnvironment: [String: String] = [:], input: String = "",
               asIs: Bool = false) throws -> CommandResult
    {
        var environment = ["XDG_CONFIG_HOME": folder + "/config", "XDG_STATE_HOME": folder + "/state",
                           "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent", "PATH": "/usr/local/bin:/bin"].merging(extraEnvironment) { $1 }
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus?.address ?? "unix:path=/nonexistent"
        if asIs { return try run(arguments[0], Array(arguments.dropFirst()), environment: environment, input: input) }
        return try run(DaemonRig.ccrelay, ["setup"] + arguments, environment: environment, input: input)
    }

    var daemonLog: String { folder + "/daemon.log" }

    /// A bus that starts the daemon as the package's D-Bus service file does (no systemd here).
    func busThatStartsTheDaemon() throws -> PrivateBus {
        try PrivateBus(services: ["io.github.ccrelay.CCRelay":
            "env XDG_STATE_HOME=\(folder)/state DBUS_SYSTEM_BUS_ADDRESS=unix:path=/nonexistent \(DaemonRig.ccrelay) daemon --config \(configPath) 2>>\(daemonLog)"])
    }

    @Test func aFreshUserGetsOnlineInOneCommand() async throws {
        let pki = TestPKI.shared
        let sim = try CCSimProcess()
        let bus = try busThatStartsTheDaemon()
        let result = try setup(["--server", sim.url, "--certificate", pki.clientCertificate, "--key", pki.clientKey,
                                "--ca-file", pki.caCertificate, "--yes"], bus: bus)
        #expect(result.status == 0, "\(result.standardOutput)\n\(result.standardError)")
        #expect(result.standardOutput.contains("The server logged you in"), "\(result.standardOutput)")
        #expect(result.standardOutput.contains("started through the session bus"), "\(result.standardOutput)")
        let text = try String(contentsOfFile: configPath, encoding: .utf8)
        #expect(text.contains("certificate = \(pki.clientCertificate)") && text.contains("ca-file = \(pki.caCertificate)"))
        var info = stat()
        #expect(stat(configPath, &info) == 0 && info.st_mode & 0o777 == 0o600)
        // The trial login was logged out again; the daemon's is online.
        #expect(await eventually(timeout: .seconds(20)) { (try? sim.sessions().filter { $0["reason"] == nil }.count) == 1 },
                "\((try? String(contentsOfFile: daemonLog, encoding: .utf8)) ?? "")")
        #expect(try sim.sessions().first?["reason"] as? String == "logout")
        let status = try run(DaemonRig.ccrelay, ["status", "--json"], environment: bus.environment)
        #expect(status.standardOutput.contains("\"state\":\"online\""), "\(status.standardOutput)")
        _ = try? run(DaemonRig.ccrelay, ["logout"], environment: bus.environment)
        try? FileManager.default.removeItem(atPath: folder)
    }

    @Test func aPKCS12BundleWithAPasswordIsSetUpWithThePasswordInTheKeyring() async throws {
        let pki = TestPKI.shared
        let sim = try CCSimProcess()
        let bus = try busThatStartsTheDaemon()
        let keyring = try await GnomeKeyring(on: bus)
        let base = ["--server", sim.url, "--certificate", pki.clientPKCS12, "--ca-file", pki.caCertificate, "--p12-password-stdin", "--yes"]
        let wrong = try setup(base, bus: bus, input: "not the password\n")
        #expect(wrong.status == 1, "\(wrong.standardOutput)\n\(wrong.standardError)")
        #expect(!FileManager.default.fileExists(atPath: configPath), "nothing written when the bundle does not open")
        // issue 33.5: the password given to setup is wrong for that file; the keyring has nothing to do with it.
        #expect(wrong.standardError.contains("the password given to setup is wrong for \(pki.clientPKCS12)")
                && !wrong.standardError.contains("keyring"), "\(wrong.standardError)")

        let result = try setup(base, bus: bus, input: pki.pkcs12Passphrase + "\n")
        #expect(result.status == 0, "\(result.standardOutput)\n\(result.standardError)")
        #expect(result.standardOutput.contains("Saved the certificate's password in your keyring"), "\(result.standardOutput)")
        let text = try String(contentsOfFile: configPath, encoding: .utf8)
        #expect(text.contains("certificate = \(pki.clientPKCS12)") && !text.contains("key ="), "\(text)")
        #expect(!text.contains(pki.pkcs12Passphrase), "the password is never in the file")
        // The daemon, started through the bus, opens the bundle with the keyring's password and logs in.
        let status = { try? run(DaemonRig.ccrelay, ["status", "--json"], environment: bus.environment).standardOutput }
        #expect(await eventually(timeout: .seconds(30)) { status()?.contains("\"state\":\"online\"") == true },
                "\(status() ?? "") \((try? String(contentsOfFile: daemonLog, encoding: .utf8)) ?? "")")
        _ = try? run(DaemonRig.ccrelay, ["logout"], environment: bus.environment)
        withExtendedLifetime(keyring) {}
        try? FileManager.default.removeItem(atPath: folder)
    }

    @Test func setupAddsAForwardingTargetAndSendsItATestMessage() throws {
        let pki = TestPKI.shared
        let sim = try CCSimProcess()
        let ntfy = try RelayRecorder(.ntfy)
        let base = ["--server", sim.url, "--certificate", pki.clientCertificate, "--key", pki.clientKey,
                    "--ca-file", pki.caCertificate, "--yes", "--no-autostart"]
        // A proxy in the environment is not used (it would refuse the connection).
        let result = try setup(base + ["--ntfy", "http://127.0.0.1:\(ntfy.port)/ccrelay-20231234"],
                               extraEnvironment: ["http_proxy": "http://127.0.0.1:9", "all_proxy": "http://127.0.0.1:9"])
        #expect(result.status == 0, "\(result.standardOutput)\n\(result.standardError)")
        #expect(result.standardOutput.contains("ntfy http://127.0.0.1:\(ntfy.port) #") && result.standardOutput.contains(": delivered (HTTP 200)")
                && !result.standardOutput.contains("ccrelay-20231234"), "\(result.standardOutput)")
        #expect(RelayRecorder.body(try #require(ntfy.requests().first))["title"] as? String == "CC Relay test message")
        // A second run keeps the target and adds another; a bad one is refused before anything is written.
        let again = try setup(base + ["--force", "--webhook", "http://127.0.0.1:9/hook"])
        #expect(again.status == 0, "the login worked; the webhook's failure is reported: \(again.standardError)")
        #expect(again.standardError.contains("did not take the test message"), "\(again.standardError)")
        let text = try String(contentsOfFile: configPath, encoding: .utf8)
        #expect(text.contains("[relay]\nntfy = http://127.0.0.1:\(ntfy.port)/ccrelay-20231234\nwebhook = http://127.0.0.1:9/hook\n"), "\(text)")
        let refused = try setup(base + ["--force", "--gotify", "https://gotify.campus.example/message"])
        #expect(refused.status == 1 && refused.standardError.contains("token"), "\(refused.standardError)")
        #expect(try String(contentsOfFile: configPath, encoding: .utf8) == text, "nothing replaced")
        // issue 26: --forward takes any forward URL (here ntfy's form, plain http to this computer).
        let topic = try RelayRecorder(.ntfy)
        let forwarded = try setup(base + ["--force", "--forward", "ntfy://127.0.0.1:\(topic.port)/ccrelay-forward"])
        #expect(forwarded.status == 0, "\(forwarded.standardOutput)\n\(forwarded.standardError)")
        #expect(try String(contentsOfFile: configPath, encoding: .utf8).contains("forward = ntfy://127.0.0.1:\(topic.port)/ccrelay-forward\n"))
        #expect(RelayRecorder.body(try #require(topic.requests().first))["topic"] as? String == "ccrelay-forward")
        let mistyped = try setup(base + ["--force", "--forward", "barrk://KEY"])
        #expect(mistyped.status == 1 && mistyped.standardError.contains("did you mean 'bark://'"), "\(mistyped.standardError)")
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// A first run in Chinese reads Chinese: the progress, the trial login's answer, the outcome.
    @Test func setupSpeaksTheUsersLanguage() throws {
        let pki = TestPKI.shared
        let sim = try CCSimProcess()
        let arguments = ["--server", sim.url, "--certificate", pki.clientCertificate, "--key", pki.clientKey, "--yes", "--no-autostart"]
        let refused = try setup(arguments, extraEnvironment: ["LANG": "zh_CN.UTF-8", "LANGUAGE": ""])
        #expect(refused.status == 1)
        #expect(refused.standardOutput.contains("正在尝试登录 \(sim.url)…"), "\(refused.standardOutput)")
        #expect(refused.standardError.contains("服务器没有让你登录：") && refused.standardError.contains("setup：未写入任何内容"),
                "\(refused.standardError)")
        let written = try setup(arguments + ["--ca-file", pki.caCertificate], extraEnvironment: ["LANG": "zh_TW.UTF-8", "LANGUAGE": ""])
        #expect(written.status == 0, "\(written.standardError)")
        #expect(written.standardOutput.contains("伺服器已讓你登入") && written.standardOutput.contains("已寫入 \(configPath)。"),
                "\(written.standardOutput)")
        let again = try setup(arguments, extraEnvironment: ["LANG": "zh_TW.UTF-8", "LANGUAGE": ""])
        #expect(again.status == 1 && again.standardError.contains("已存在") && again.standardError.contains("ccrelay setup --edit"), "\(again.standardError)")
        try? FileManager.default.removeItem(atPath: folder)
    }

    @Test func nothingIsWrittenWhenTheLoginFailsAndNothingIsReplacedWithoutForce() throws {
        let pki = TestPKI.shared
        let sim = try CCSimProcess()
        // Without the campus CA the server cannot be verified: refused, nothing written.
        let refused = try setup(["--server", sim.url, "--certificate", pki.clientCertificate, "--key", pki.clientKey,
                                 "--yes", "--no-autostart"])
        #expect(refused.status == 1)
        #expect(refused.standardError.contains("did not log you in"), "\(refused.standardError)")
        #expect(!FileManager.default.fileExists(atPath: configPath))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder + "/config/ccrelay").isEmpty, "no trial file left")
        let good = ["--server", sim.url, "--certificate", pki.clientCertificate, "--key", pki.clientKey,
                    "--ca-file", pki.caCertificate, "--yes", "--no-autostart"]
        #expect(try setup(good).status == 0)
        let again = try setup(good)
        #expect(again.status == 1 && again.standardError.contains("to change it: ccrelay setup --edit"), "\(again.standardError)")
        #expect(try setup(good + ["--edit"]).status == 0, "--edit changes what is there")
        #expect(try setup(good + ["--force"]).status == 0)
        #expect(try sim.sessions().count == 3, "one trial login each time it wrote")
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// A second run changes only what it asks or is told: every other line,
    /// comment and unknown key of the file stays (issue 20: `--force` dropped
    /// `[location] mode = off`, which silently became `auto`).
    @Test func aSecondSetupChangesOnlyWhatItIsToldAndKeepsEveryOtherLine() throws {
        let pki = TestPKI.shared
        let sim = try CCSimProcess()
        let good = ["--server", sim.url, "--certificate", pki.clientCertificate, "--key", pki.clientKey,
                    "--ca-file", pki.caCertificate, "--yes", "--no-autostart"]
        #expect(try setup(good).status == 0)
        let mine = """
            # the campus asked for this
            [location]
            mode = off   ; never send a fix
            [keepalive]
            warn-before = 30
            logout-on-exit = true
            [notifications]
            notices = false
            mystery = kept
            """
        let first = try String(contentsOfFile: configPath, encoding: .utf8)
        try (first + mine + "\n").write(toFile: configPath, atomically: true, encoding: .utf8)
        chmod(configPath, 0o600)
        let again = try setup(good + ["--force", "--interface", "lo"])
        #expect(again.status == 0, "\(again.standardOutput)\n\(again.standardError)")
        let text = try String(contentsOfFile: configPath, encoding: .utf8)
        #expect(text.contains(mine), "every line of the user's is kept, in order: \(text)")
        #expect(text.contains("[server]\nurl = \(sim.url)\nca-file = \(pki.caCertificate)\ninterface = lo\n"), "\(text)")
        #expect(text.components(separatedBy: "certificate = ").count == 2, "one certificate line: \(text)")
        let check = try run(DaemonRig.ccrelay, ["config", "check", "--config", configPath])
        #expect(check.status == 0, "\(check.standardError)")
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// issue 21: setup forgives typing, on a real terminal (a pty): the first question shows an
    /// example, `~/` paths are the home's, a file that is not there is said at once and asked
    /// for again (not after the last question), the certificate files downloaded elsewhere are
    /// copied beside the configuration with mode 0600, and the written file names the copies.
    @Test func setupOnATerminalForgivesTypingAndOffersToCopyTheCertificate() throws {
        let pki = TestPKI.shared
        let sim = try CCSimProcess()
        let home = folder + "/home"
        try FileManager.default.createDirectory(atPath: home + "/Downloads", withIntermediateDirectories: true)
        for (from, to) in [(pki.clientCertificate, "student.pem"), (pki.clientKey, "student.key"), (pki.caCertificate, "campus-ca.pem")] {
            try FileManager.default.copyItem(atPath: from, toPath: home + "/Downloads/" + to)
        }
        let driver = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/pty_drive.py").path
        let steps: [(String, String)] = [
            ("CC server URL (for example https://", sim.url),
            ("User name for a password login (none): ", ""),
            ("Student certificate", "~/Downloads/studnet.pem"),
            ("type the path again", "~/Downloads/student.pem"),
            ("Its private key", "~/Downloads/student.key"),
            ("Campus CA file", "~/Downloads/campus-ca.pem"),
            ("readable only by you? [Y/n]", "y"),
            ("readable only by you? [Y/n]", ""),
            // issue 33.4: the CA file is not left in Downloads either.
            ("campus-ca.pem to ", ""),
        ]
        let result = try setup([driver] + steps.flatMap { ["--step", "\($0.0)=>\($0.1)"] } + ["--", DaemonRig.ccrelay, "setup", "--protocol", "cc1", "--no-autostart"],
                               extraEnvironment: ["HOME": home], asIs: true)
        #expect(result.status == 0, "\(result.standardOutput)\n\(result.standardError)")
        #expect(result.standardOutput.contains("~/Downloads/studnet.pem: No such file or directory; type the path again"),
                "the mistake is said with the user's own words: \(result.standardOutput)")
        let written = folder + "/config/ccrelay"
        let text = try String(contentsOfFile: configPath, encoding: .utf8)
        #expect(text.contains("certificate = \(written)/student.pem") && text.contains("key = \(written)/student.key")
                && text.contains("ca-file = \(written)/campus-ca.pem"), "\(text)")
        for copy in ["student.pem", "student.key", "campus-ca.pem"] {
            var info = stat()
            #expect(stat(written + "/" + copy, &info) == 0 && info.st_mode & 0o777 == 0o600, "\(copy) is readable only by the user")
        }
        #expect(!result.standardOutput.contains(".ccrelay-setup-"), "never the trial file's name: \(result.standardOutput)")
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// issue 21: a plain http:// URL to a server that speaks TLS fails in a way that says
    /// nothing to a student; the trial login adds the hint to use https://.
    @Test func plainHTTPToATLSServerGetsTheHintToUseHTTPS() throws {
        let pki = TestPKI.shared
        let sim = try CCSimProcess()
        let plain = sim.url.replacingOccurrences(of: "https://", with: "http://")
        let result = try setup(["--server", plain, "--certificate", pki.clientCertificate, "--key", pki.clientKey,
                                "--ca-file", pki.caCertificate, "--yes", "--no-autostart"])
        #expect(result.status == 1)
        #expect(result.standardError.contains("hint: if the server speaks TLS, use \(sim.url)"), "\(result.standardError)")
        #expect(!FileManager.default.fileExists(atPath: configPath))
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// A value with a line break would write keys of its own (issue 20:
    /// `--interface $'lo\n[relay]\nwebhook = …'` wrote a forwarding target).
    @Test func aValueTheFileCannotHoldIsRefusedAndNothingIsWritten() throws {
        let pki = TestPKI.shared
        let base = ["--server", "https://127.0.0.1:1/", "--certificate", pki.clientCertificate, "--key", pki.clientKey,
                    "--yes", "--no-autostart"]
        for (option, value) in [("--interface", "lo\n[relay]\nwebhook = https://attacker.example/x"),
                                ("--server", "https://127.0.0.1:1/\r\n[relay]"),
                                ("--webhook", "https://hooks.example/a\nkinds = notice"),
                                ("--ca-file", "/tmp/campus ;ca.pem")] {
            let result = try setup(base + [option, value])
            #expect(result.status == 2, "\(option): \(result.standardError)")
            #expect(result.standardError.contains(option), "the option is named: \(result.standardError)")
            #expect(!result.standardError.contains("attacker") && !result.standardError.contains("\r"), "not echoed: \(result.standardError)")
            #expect(!FileManager.default.fileExists(atPath: configPath))
        }
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// issue 20: a configuration folder that cannot be made was reported as
    /// "No such file or directory"; a password line over 64 KiB killed setup with SIGPIPE (exit 141);
    /// an empty standard input ended setup with status 1 and not a word.
    @Test func aFolderThatCannotBeMadeAndAnEndlessPasswordAreSaidAsWhatTheyAre() throws {
        let pki = TestPKI.shared
        let base = ["--server", "https://127.0.0.1:1/", "--certificate", pki.clientCertificate, "--key", pki.clientKey,
                    "--yes", "--no-autostart"]
        let blocked = try setup(base, extraEnvironment: ["XDG_CONFIG_HOME": "/etc/hostname/config"])
        #expect(blocked.status == 1, "\(blocked.standardError)")
        #expect(blocked.standardError.contains("cannot create /etc/hostname/config") && blocked.standardError.contains("Not a directory"),
                "\(blocked.standardError)")
        let long = try setup(base + ["--user", "20231234", "--password-stdin"], input: String(repeating: "p", count: 200_000) + "\n")
        #expect(long.status == 1, "not 141: \(long.status) \(long.standardError)")
        #expect(long.standardError.contains("longer than 1,024 bytes"), "\(long.standardError)")
        #expect(!FileManager.default.fileExists(atPath: configPath))
        let empty = try setup(base + ["--user", "20231234", "--password-stdin"], input: "")
        #expect(empty.status == 1 && empty.standardError.contains("no password came"), "\(empty.status) \(empty.standardError)")
        #expect(!FileManager.default.fileExists(atPath: configPath))
        try? FileManager.default.removeItem(atPath: folder)
    }
}
