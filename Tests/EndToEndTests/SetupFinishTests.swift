import Foundation
import TestSupport
import Testing

/// Issue 33.4 and 33.5: setup finishes the job — `--forward` alone on a set-up
/// machine touches no live session, the last line tells the truth about the
/// daemon, `--edit` mends a broken file, a campus push server gets its CA, a
/// `.p12` without a keyring is not a dead end.
extension SetupTests {
    var pem: [String] {
        let pki = TestPKI.shared
        return ["--server", "", "--certificate", pki.clientCertificate, "--key", pki.clientKey, "--ca-file", pki.caCertificate]
    }

    func answers(_ sim: CCSimProcess) -> [String] {
        var arguments = pem
        arguments[1] = sim.url
        return arguments
    }

    /// The simulator's count of CC/1 requests handled.
    func campusRequests(_ sim: CCSimProcess) throws -> Int {
        (try sim.control("GET", "stats") as? [String: Any])?["requests"] as? Int ?? -1
    }

    @Test func forwardAloneOnALiveDaemonAddsTheTargetWithoutACampusRequest() async throws {
        let sim = try CCSimProcess()
        let bus = try busThatStartsTheDaemon()
        let ntfy = try RelayRecorder(.ntfy)
        let first = try setup(answers(sim) + ["--yes"], bus: bus)
        #expect(first.status == 0, "\(first.standardOutput)\n\(first.standardError)")
        let status = { try? run(DaemonRig.ccrelay, ["status", "--json"], environment: bus.environment).standardOutput }
        #expect(await eventually(timeout: .seconds(30)) { status()?.contains("\"state\":\"online\"") == true }, "\(status() ?? "")")
        // The campus sees no request of setup's: no login, no logout; only the daemon's own
        // keep-alive reports on its session (it restarts with the changed file and resumes the session).
        func reports() throws -> Int { try sim.sessions().reduce(0) { $0 + (($1["reports"] as? [Any])?.count ?? 0) } }
        /// The requests and reports once the daemon is quiet (the same twice, a second apart).
        func settled() async throws -> (requests: Int, reports: Int) {
            var last = (try campusRequests(sim), try reports())
            for _ in 0..<15 {
                try await Task.sleep(for: .seconds(1))
                let now = (try campusRequests(sim), try reports())
                if now == last { break }
                last = now
            }
            return (last.0, last.1)
        }
        let before = try await settled()
        let sessions = try sim.sessions().compactMap { $0["session"] as? String }

        // As the README shows it: no --edit, and no trial login and logout while the daemon is online.
        let forwarded = try setup(["--forward", "ntfy://127.0.0.1:\(ntfy.port)/ccrelay-forward"], bus: bus)
        #expect(forwarded.status == 0, "\(forwarded.standardOutput)\n\(forwarded.standardError)")
        let settledAfter = try await settled()
        let sessionsAfter = try sim.sessions()
        #expect(settledAfter.requests - before.requests == settledAfter.reports - before.reports
                && sessionsAfter.compactMap { $0["session"] as? String } == sessions,
                "no campus request of setup's during setup --forward: \(before) \(settledAfter) \(sessionsAfter)")
        #expect(try sim.sessions().filter { $0["reason"] == nil }.count == 1, "the daemon's session stays")
        #expect(forwarded.standardOutput.contains("no campus login was tried")
                && forwarded.standardOutput.contains("ccrelay runs already and reads the new configuration by itself"), "\(forwarded.standardOutput)")
        #expect(RelayRecorder.body(try #require(ntfy.requests().first))["topic"] as? String == "ccrelay-forward")
        #expect(try String(contentsOfFile: configPath, encoding: .utf8).contains("[relay]\nforward = ntfy://127.0.0.1:\(ntfy.port)/ccrelay-forward\n"))

        // A full --edit with the daemon running: its last line says so, not "to start it now: ccrelay daemon".
        let edited = try setup(["--edit", "--yes"], bus: bus)
        #expect(edited.status == 0, "\(edited.standardOutput)\n\(edited.standardError)")
        #expect(edited.standardOutput.contains("ccrelay runs already and reads the new configuration by itself")
                && !edited.standardOutput.contains("ccrelay daemon"), "\(edited.standardOutput)")
        _ = try? run(DaemonRig.ccrelay, ["logout"], environment: bus.environment)
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// A push server on the campus with the school's own certificate: the failed test message names
    /// `[relay] ca-file` and the option; `--forward-ca-file` writes it, and the message is delivered.
    @Test func aCampusPushServerGetsItsCAFileFromSetup() throws {
        let pki = TestPKI.shared
        let sim = try CCSimProcess()
        let campus = try RelayRecorder(.ntfy, tls: true)
        #expect(try setup(answers(sim) + ["--yes", "--no-autostart"]).status == 0)
        let url = "https://127.0.0.1:\(campus.port)/ccrelay-campus"
        let untrusted = try setup(["--ntfy", url])
        #expect(untrusted.status == 0, "the login stands; the target's failure is reported: \(untrusted.standardError)")
        #expect(untrusted.standardError.contains("[relay] ca-file") && untrusted.standardError.contains("--forward-ca-file FILE"),
                "\(untrusted.standardError)")
        let trusted = try setup(["--ntfy", url, "--forward-ca-file", pki.caCertificate])
        #expect(trusted.status == 0 && trusted.standardOutput.contains(": delivered (HTTP 200)"), "\(trusted.standardOutput)\n\(trusted.standardError)")
        let text = try String(contentsOfFile: configPath, encoding: .utf8)
        #expect(text.contains("[relay]\nntfy = \(url)\nca-file = \(pki.caCertificate)\n"), "\(text)")
        #expect(campus.requests().count == 1, "the second test message got through")
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// `setup --edit` on a file with two wrong lines (a misspelt key, a relative CA path): the
    /// file's answers are the defaults, the misspelt key is corrected, the CA typed again is used.
    @Test func editOffersTheFilesAnswersAndMendsAMisspeltKey() throws {
        let pki = TestPKI.shared
        let sim = try CCSimProcess()
        try FileManager.default.createDirectory(atPath: folder + "/config/ccrelay", withIntermediateDirectories: true)
        try "[server]\nurl = \(sim.url)\nca-file = campus-ca.pem\n[auth]\ncertficate = \(pki.clientCertificate)\nkey = \(pki.clientKey)\n"
            .write(toFile: configPath, atomically: true, encoding: .utf8)
        chmod(configPath, 0o600)
        let driver = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/pty_drive.py").path
        let steps: [(String, String)] = [
            ("[\(sim.url)]: ", ""),
            ("User name for a password login (none): ", ""),
            ("[\(pki.clientCertificate)]: ", ""),
            ("[\(pki.clientKey)]: ", ""),
            ("Campus CA file [campus-ca.pem]: ", pki.caCertificate),
            ("readable only by you? [Y/n]", "n"),
            ("readable only by you? [Y/n]", "n"),
            ("readable only by you? [Y/n]", "n"),
        ]
        let result = try setup([driver] + steps.flatMap { ["--step", "\($0.0)=>\($0.1)"] }
                                   + ["--", DaemonRig.ccrelay, "setup", "--edit", "--protocol", "cc1", "--no-autostart"], asIs: true)
        #expect(result.status == 0, "\(result.standardOutput)\n\(result.standardError)")
        #expect(result.standardOutput.contains("\(configPath):5: 'certficate' is no key of [auth]; it becomes 'certificate'."),
                "\(result.standardOutput)")
        let text = try String(contentsOfFile: configPath, encoding: .utf8)
        #expect(text == "[server]\nurl = \(sim.url)\nca-file = \(pki.caCertificate)\n[auth]\ncertificate = \(pki.clientCertificate)\nkey = \(pki.clientKey)\n",
                "\(text)")
        #expect(try run(DaemonRig.ccrelay, ["config", "check", "--config", configPath]).status == 0)
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// A `.p12` on a desktop without a Secret Service: not the same command again, but a keyring
    /// to install or the openssl commands that make PEM files of it.
    @Test func aBundleWithoutAKeyringIsToldTheWaysOut() throws {
        let pki = TestPKI.shared
        let sim = try CCSimProcess()
        let bus = try PrivateBus()
        let result = try setup(["--server", sim.url, "--certificate", pki.clientPKCS12, "--ca-file", pki.caCertificate, "--p12-password-stdin",
                                "--yes", "--no-autostart"], bus: bus, input: pki.pkcs12Passphrase + "\n")
        #expect(result.status == 1, "\(result.standardOutput)\n\(result.standardError)")
        #expect(result.standardError.contains("sudo apt install gnome-keyring")
                && result.standardError.contains("openssl pkcs12 -in \(pki.clientPKCS12) -clcerts -nokeys -out ")
                && result.standardError.contains("openssl pkcs12 -in \(pki.clientPKCS12) -nocerts -nodes -out ")
                && !result.standardError.contains("--p12-password-stdin --force"), "\(result.standardError)")
        #expect(!FileManager.default.fileExists(atPath: configPath))
        // The daemon's refusal (config check's) names the same ways out, not only the command that needs a keyring.
        try FileManager.default.createDirectory(atPath: folder + "/config/ccrelay", withIntermediateDirectories: true)
        try "[server]\nurl = \(sim.url)\n[auth]\ncertificate = \(pki.clientPKCS12)\n".write(toFile: configPath, atomically: true, encoding: .utf8)
        chmod(configPath, 0o600)
        let check = try setup([DaemonRig.ccrelay, "config", "check", "--config", configPath], asIs: true)
        #expect(check.status == 1 && check.standardError.contains("sudo apt install gnome-keyring")
                && check.standardError.contains("openssl pkcs12 -in \(pki.clientPKCS12) -nocerts -nodes -out "), "\(check.standardError)")
        try? FileManager.default.removeItem(atPath: folder)
    }
}
