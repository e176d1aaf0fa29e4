import Foundation
import TestSupport
import Testing

/// `ccrelay config check|path`, run as a user would.
@Suite struct ConfigCommandTests {
    static let ccrelay = buildProductsDirectory.appendingPathComponent("ccrelay").path

    func write(_ text: String, mode: mode_t = 0o600) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-\(UUID().uuidString).conf").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, mode)
        return path
    }

    @Test func aGoodFileIsOK() throws {
        let path = try write("[server]\nurl = https://cc.campus.example/\n[auth]\nuser = 20231234\n")
        let result = try run(Self.ccrelay, ["config", "check", "--config", path])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput == "\(path): ok\n")
    }

    @Test func aBadValueNamesFileAndLine() throws {
        let path = try write("[server]\nurl = https://x/\n[keepalive]\nwarn-before = later\nautorelogin = true\n")
        let result = try run(Self.ccrelay, ["config", "check", "--config=\(path)"])
        #expect(result.status == 1)
        #expect(result.standardError.contains("error: \(path):4: warn-before must be a number"))
        #expect(result.standardError.contains("warning: \(path):5: unknown key 'autorelogin'"))
        #expect(result.standardError.contains("did you mean 'auto-relogin'?"))
    }

    /// A Srun portal's address the parser lets through but the portal's own check refuses (a
    /// query) is named as the key the file has, [server] url, at its line.
    @Test func aSrunPortalsAddressWithAQueryNamesTheURLsLine() throws {
        let password = try write("pw\n")
        let path = try write("[server]\nprotocol = srun\nurl = http://10.0.0.55/?ac_id=1\n[auth]\nuser = 2024000001\npassword-file = \(password)\n")
        let result = try run(Self.ccrelay, ["config", "check", "--config", path])
        #expect(result.status == 1)
        #expect(result.standardError.contains("error: \(path):3: url must be the portal's base URL, without user, query or fragment"),
                "\(result.standardError)")
        #expect(!result.standardError.contains("[srun] portal"))
    }

    @Test func aFileOthersCanReadIsRefusedWithTheFix() throws {
        let path = try write("[server]\nurl = https://x/\n", mode: 0o644)
        let result = try run(Self.ccrelay, ["config", "check", "--config", path])
        #expect(result.status == 1)
        #expect(result.standardError.contains("chmod 600 \(path)"))
        let missing = try run(Self.ccrelay, ["config", "check", "--config", "/nonexistent/ccrelay.conf"])
        #expect(missing.status == 1 && missing.standardError.contains("/nonexistent/ccrelay.conf: cannot read"))
    }

    @Test func pathFollowsXDGConfigHome() throws {
        let result = try run(Self.ccrelay, ["config", "path"], environment: ["XDG_CONFIG_HOME": "/tmp/xdg-test"])
        #expect(result.standardOutput == "/tmp/xdg-test/ccrelay/ccrelay.conf\n")
        let typo = try run(Self.ccrelay, ["config", "chek"])
        #expect(typo.status == 2 && typo.standardError.contains("did you mean 'check'?"))
        #expect(try run(Self.ccrelay, ["config", "--help"]).standardOutput.contains("FILE:LINE"))
    }
}

/// `config check` runs the daemon's own checks, so it says "ok" exactly when
/// the daemon would start; and files of every odd kind get a clear answer.
@Suite struct ConfigCheckAsTheDaemonDoesTests {
    static let ccrelay = buildProductsDirectory.appendingPathComponent("ccrelay").path
    let pki = TestPKI.shared
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-check-\(UUID().uuidString)").path

    func write(_ text: String, mode: mode_t = 0o600) throws -> String {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/\(UUID().uuidString).conf"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, mode)
        return path
    }

    func check(_ path: String) throws -> CommandResult { try run(Self.ccrelay, ["config", "check", "--config", path]) }

    func config(url: String = "https://127.0.0.1:8443/", certificate: String? = nil, key: String? = nil, extra: String = "") -> String {
        "[server]\nurl = \(url)\n\(extra)\n[auth]\ncertificate = \(certificate ?? pki.clientCertificate)\n"
            + (key.map { "key = \($0)\n" } ?? "key = \(pki.clientKey)\n")
    }

    @Test func whatTheDaemonRefusesTheCheckRefusesWithFileAndLine() throws {
        let open = directory + "/open.key"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: pki.clientKey, toPath: open)
        chmod(open, 0o644)
        let cases: [(String, String)] = [
            (config(key: directory + "/missing.key"), ":6: cannot read private key"),
            (config(key: open), ":6: private key \(open) may be read by other users"),
            (config(certificate: pki.expiredCertificate, key: pki.expiredKey), ":5: the client certificate"),
            (config(certificate: pki.clientPKCS12, key: nil).replacingOccurrences(of: "key = \(pki.clientKey)\n", with: ""),
             "protected by a password"),
            (config(url: "https://"), ":2: url must be https://HOST"),
            (config(url: "https://127.0.0.1:99999/"), ":2: url must be https://HOST[:PORT]/ with a port from 1 to 65535"),
            (config(url: "http://127.0.0.1.evil.example/"), ":2: url must be https://HOST"),
            (config(extra: "interface = nosuchif0"), ":3: there is no network interface 'nosuchif0'"),
            (config(key: pki.encryptedKey), "protected by a passphrase"),
            (config(key: pki.strangerKey), "does not belong to certificate"),
        ]
        for (text, expected) in cases {
            let path = try write(text)
            let result = try check(path)
            #expect(result.status == 1, "\(expected): \(result.standardOutput)")
            #expect(result.standardError.contains(expected), "\(expected): \(result.standardError)")
        }
        // And the daemon refuses the same file with the same words.
        let path = try write(config(key: open))
        let daemon = try run(Self.ccrelay, ["daemon", "--config", path], environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"])
        #expect(daemon.status == 1 && daemon.standardError.contains("may be read by other users"))
    }

    @Test func windowsLineEndsAndAByteOrderMarkJustWork() throws {
        let text = "\u{FEFF}" + config().replacingOccurrences(of: "\n", with: "\r\n")
        let result = try check(try write(text))
        #expect(result.status == 0, "\(result.standardError)")
    }

    @Test func oddFilesGetAClearAnswerAndNothingBlocks() throws {
        let nul = try check(try write("[server]\nurl = https://x/\u{0}evil\n"))
        #expect(nul.status == 1 && nul.standardError.contains(":2: the line holds a control character"), "\(nul.standardError)")
        try FileManager.default.createDirectory(atPath: directory + "/a-directory", withIntermediateDirectories: true)
        let folder = try check(directory + "/a-directory")
        #expect(folder.status == 1 && folder.standardError.contains("it is a directory"), "\(folder.standardError)")
        #expect(!folder.standardError.contains("Success"))
        let fifo = directory + "/a-fifo"
        mkfifo(fifo, 0o600)
        let pipe = try check(fifo)
        #expect(pipe.status == 1 && pipe.standardError.contains("it is a FIFO"), "\(pipe.standardError)")
        let fifoCertificate = try check(try write(config(certificate: fifo)))
        #expect(fifoCertificate.status == 1 && fifoCertificate.standardError.contains("a FIFO"), "\(fifoCertificate.standardError)")
    }

    @Test func sigtermEndsTheDaemonWhileItStarts() async throws {
        // A session bus that accepts the connection and never answers: the daemon is stuck starting.
        let socket = directory + "/silent.sock"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let listener = try ChildProcess("/usr/bin/python3", ["-c", "import socket, time; s = socket.socket(socket.AF_UNIX); s.bind('\(socket)'); s.listen(); c = s.accept(); time.sleep(60)"])
        defer { listener.stop() }
        #expect(await eventually(timeout: .seconds(10)) { FileManager.default.fileExists(atPath: socket) })
        let path = try write(config())
        let daemon = try ChildProcess(Self.ccrelay, ["daemon", "--config", path], environment: [
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(socket)", "XDG_STATE_HOME": directory + "/state",
        ])
        try await Task.sleep(for: .milliseconds(800))
        #expect(daemon.isRunning, "still starting")
        kill(daemon.pid, SIGTERM)
        #expect(await eventually(timeout: .seconds(5)) { !daemon.isRunning }, "SIGTERM ends a daemon that is starting")
    }
}
