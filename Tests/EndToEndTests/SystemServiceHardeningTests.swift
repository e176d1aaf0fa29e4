import Foundation
import TestSupport
import Testing

/// A shared lab server no local user or service account can turn against
/// its owner (issue 31.3, 31.5, 31.10, 31.14), in the system service's
/// serialized suite (its tests share the users and group they make).
extension SystemServiceTests {
    /// A service folder as systemd and the package leave it: the configuration
    /// folder setup's to make, the state folder the service user's.
    func freshService(_ bus: PrivateBus, instance: String? = nil) throws -> Service {
        let service = try Service(bus: bus, instance: instance)
        try FileManager.default.removeItem(atPath: service.folder + "/etc")
        chown(service.folder + "/state", getpwnam("ccrelay").pointee.pw_uid, getgrnam("ccrelay").pointee.gr_gid)
        chmod(service.folder + "/state", 0o700)
        chmod(service.folder, 0o755)
        return service
    }

    func setup(_ service: Service, _ arguments: [String], input: String = "") throws -> CommandResult {
        try run(DaemonRig.ccrelay, [service.system, "setup"] + arguments + ["--no-autostart", "--yes"], environment: service.environment, input: input)
    }

    /// Everything under `folder`, relative, sorted.
    func contents(_ folder: String) -> [String] {
        ((FileManager.default.enumerator(atPath: folder)?.allObjects as? [String]) ?? []).sorted()
    }

    /// A folder a student owns (0700, as a home is), with their certificate and key in it.
    func studentFolder(_ users: TestUsers) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-student-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let pki = TestPKI.shared
        try FileManager.default.copyItem(atPath: pki.clientCertificate, toPath: folder + "/student.pem")
        try FileManager.default.copyItem(atPath: pki.clientKey, toPath: folder + "/student.key")
        let student = getpwnam(users.reader).pointee.pw_uid
        for path in [folder, folder + "/student.pem", folder + "/student.key"] { chown(path, student, getgid()) }
        chmod(folder, 0o700)
        return folder
    }

    @Test(.enabled(if: getuid() == 0, "needs root: setup --system is for root"))
    func setupFollowsNoLinkChecksWhatAFileIsAndPlacesNothingUntilTheTrialWorked() async throws {
        let users = try TestUsers(serviceUser: true)
        let bus = try PrivateBus(systemPolicy: Self.packaging + "/io.github.ccrelay.CCRelay.system.conf")
        let sim = try CCSimProcess(["--interval", "2", "--timeout", "8"])
        let service = try freshService(bus)
        let student = try studentFolder(users)
        defer { try? FileManager.default.removeItem(atPath: student) }
        let pki = TestPKI.shared
        let secret = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-shadow-\(UUID().uuidString)").path
        try "root:$6$secret-hash:19000:0:99999:7:::\n".write(toFile: secret, atomically: true, encoding: .utf8)
        chmod(secret, 0o600)
        defer { try? FileManager.default.removeItem(atPath: secret) }

        // A link the student planted, named like a key, to a file only root reads.
        try FileManager.default.removeItem(atPath: student + "/student.key")
        try FileManager.default.createSymbolicLink(atPath: student + "/student.key", withDestinationPath: secret)
        var result = try setup(service, ["--server", sim.url, "--certificate", student + "/student.pem", "--key", student + "/student.key",
                                         "--ca-file", pki.caCertificate])
        #expect(result.status == 1 && result.standardError.contains("symbolic link"), "\(result.standardError)")
        // A link to a folder on the way is no way round it.
        try FileManager.default.createSymbolicLink(atPath: student + "/etc-link", withDestinationPath: (secret as NSString).deletingLastPathComponent)
        result = try setup(service, ["--server", sim.url, "--certificate", student + "/student.pem",
                                     "--key", student + "/etc-link/" + (secret as NSString).lastPathComponent, "--ca-file", pki.caCertificate])
        #expect(result.status == 1 && result.standardError.contains("symbolic link"), "\(result.standardError)")
        // A file that is no key (the shadow file copied by its owner, root) is refused for what it is.
        result = try setup(service, ["--server", sim.url, "--certificate", student + "/student.pem", "--key", secret, "--ca-file", pki.caCertificate])
        #expect(result.status == 1 && result.standardError.contains("is not a PEM private key"), "\(result.standardError)")
        // A trial that fails (a server that is not there): nothing placed, nothing staged.
        try FileManager.default.removeItem(atPath: student + "/student.key")
        try FileManager.default.copyItem(atPath: pki.clientKey, toPath: student + "/student.key")
        result = try setup(service, ["--server", "https://127.0.0.1:1/", "--certificate", student + "/student.pem", "--key", student + "/student.key",
                                     "--ca-file", pki.caCertificate])
        #expect(result.status == 1 && result.standardError.contains("nothing was written"), "\(result.standardError)")
        #expect(contents(service.folder + "/etc").isEmpty, "no copy stays: \(contents(service.folder + "/etc"))")
        // The same answers against the campus: placed, and the copy is the student's key.
        result = try setup(service, ["--server", sim.url, "--certificate", student + "/student.pem", "--key", student + "/student.key",
                                     "--ca-file", pki.caCertificate])
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        #expect(contents(service.folder + "/etc") == ["ccrelay.conf", "ccrelay.d", "ccrelay.d/ca.pem", "ccrelay.d/student.key", "ccrelay.d/student.pem"]
                    || contents(service.folder + "/etc").contains("ccrelay.d/student.key"), "\(contents(service.folder + "/etc"))")
        #expect(FileManager.default.contents(atPath: service.folder + "/etc/ccrelay.d/student.key") == FileManager.default.contents(atPath: pki.clientKey))
    }

    @Test(.enabled(if: getuid() == 0, "needs root: setup --system is for root"))
    func aSetupEndedBySIGTERMLeavesNeitherItsTrialNorItsCopiesNorItsHelper() async throws {
        let users = try TestUsers(serviceUser: true)
        defer { withExtendedLifetime(users) {} }
        let bus = try PrivateBus(systemPolicy: Self.packaging + "/io.github.ccrelay.CCRelay.system.conf")
        let service = try freshService(bus)
        let silent = try DoctorTests.SilentPort()
        let pki = TestPKI.shared
        let setup = try ChildProcess(DaemonRig.ccrelay, [
            "--system", "setup", "--server", "https://127.0.0.1:\(silent.port)/", "--certificate", pki.clientCertificate, "--key", pki.clientKey,
            "--ca-file", pki.caCertificate, "--forward", "tgram://123456789:AAHsecretBotToken/42", "--no-autostart", "--yes",
        ], environment: service.environment)
        // The trial waits on a server that never answers: its helper and its files are there.
        #expect(await eventually(timeout: .seconds(60)) { self.contents(service.folder + "/etc").contains { $0.hasSuffix(".conf") && $0.contains("setup") } },
                "\(contents(service.folder + "/etc"))")
        #expect(DoctorTests.processes(with: "--try") > 0)
        setup.stop(signal: SIGTERM)
        #expect(setup.wait() != 0)
        #expect(await eventually(timeout: .seconds(10)) { DoctorTests.processes(with: "--try") == 0 }, "the trial's helper went with setup")
        #expect(contents(service.folder + "/etc").isEmpty, "no trial (with the bot token) nor a copy stays: \(contents(service.folder + "/etc"))")
    }

    @Test(.enabled(if: getuid() == 0, "needs root: setup --system is for root"))
    func twoInstancesWithFilesOfTheSameNameKeepTheirOwnAndNoInstanceIsCalledCcrelay() async throws {
        let users = try TestUsers(serviceUser: true)
        let bus = try PrivateBus(systemPolicy: Self.packaging + "/io.github.ccrelay.CCRelay.system.conf")
        let sim = try CCSimProcess(["--interval", "2", "--timeout", "8", "--user", "alice:a-pass", "--user", "bob:b-pass"])
        let alice = try freshService(bus, instance: "alice")
        let bob = try Service(bus: bus, instance: "bob", sharing: alice)
        let campus = try Service(bus: bus, instance: "campus", sharing: alice)
        let main = try Service(bus: bus, instance: nil, sharing: alice)
        let pki = TestPKI.shared
        // Alice's and Bob's certificates have the same file name, student.pem.
        let aliceFiles = try studentFolder(users)
        let bobFiles = try studentFolder(users)
        try "# Bob's own\n".appendLine(to: bobFiles + "/student.pem")
        defer { [aliceFiles, bobFiles].forEach { try? FileManager.default.removeItem(atPath: $0) } }
        for (service, files) in [(alice, aliceFiles), (bob, bobFiles)] {
            let result = try setup(service, ["--server", sim.url, "--certificate", files + "/student.pem", "--key", files + "/student.key",
                                             "--ca-file", pki.caCertificate])
            #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        }
        let etc = alice.folder + "/etc"
        #expect(FileManager.default.contents(atPath: etc + "/alice.d/student.pem") == FileManager.default.contents(atPath: aliceFiles + "/student.pem"))
        #expect(FileManager.default.contents(atPath: etc + "/bob.d/student.pem") == FileManager.default.contents(atPath: bobFiles + "/student.pem"),
                "Bob's certificate is Bob's")
        // Instance campus's password is not the main service's.
        for (service, user, password) in [(campus, "alice", "a-pass"), (main, "bob", "b-pass")] {
            let result = try setup(service, ["--server", sim.url, "--user", user, "--password-stdin", "--ca-file", pki.caCertificate], input: password + "\n")
            #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        }
        #expect(try String(contentsOfFile: etc + "/campus.d/campus-password", encoding: .utf8) == "a-pass\n")
        #expect(try String(contentsOfFile: etc + "/ccrelay.d/campus-password", encoding: .utf8) == "b-pass\n")
        // No instance reads the main service's configuration.
        let named = try run(DaemonRig.ccrelay, ["--system=ccrelay", "status"], environment: alice.environment)
        #expect(named.status == 2 && named.standardError.contains("not ccrelay"), "\(named.standardError)")
    }

    @Test(.enabled(if: getuid() == 0, "needs root: it makes users and runs the service as the user ccrelay"))
    func rootNeverOpensTheServicesJournalAndItsCommandsAskTheService() async throws {
        let users = try TestUsers(serviceUser: true)
        let bus = try PrivateBus(systemPolicy: Self.packaging + "/io.github.ccrelay.CCRelay.system.conf")
        let sim = try CCSimProcess(["--interval", "2", "--timeout", "8"])
        let webhook = try RelayRecorder(.webhook)
        let service = try freshService(bus)
        let setup = try setup(service, ["--server", sim.url, "--certificate", TestPKI.shared.clientCertificate, "--key", TestPKI.shared.clientKey,
                                        "--ca-file", TestPKI.shared.caCertificate, "--webhook", "http://127.0.0.1:\(webhook.port)/hook"])
        #expect(setup.status == 0, "\(setup.standardOutput)\(setup.standardError)")
        let state = service.folder + "/state"
        // The service account planted a link where the journal goes.
        let target = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-target-\(UUID().uuidString)").path
        try "precious\n".write(toFile: target, atomically: true, encoding: .utf8)
        chmod(target, 0o644)
        defer { try? FileManager.default.removeItem(atPath: target) }
        try FileManager.default.createSymbolicLink(atPath: state + "/alerts.db-wal", withDestinationPath: target)

        // Before the service's first start, root's commands say it is not running; none opens the journal.
        for arguments in [["history"], ["badge"], ["badge", "clear"], ["timeline"]] {
            let result = try service.cli(arguments)
            #expect(result.status != 0 && result.standardError.contains("systemctl start ccrelay"), "\(arguments): \(result.standardError)")
        }
        let doctor = try service.cli(["doctor"])
        #expect(doctor.standardOutput.contains("kept by the service, which is not running"), "\(doctor.standardOutput)")
        #expect(contents(state) == ["alerts.db-wal"], "root made nothing there: \(contents(state))")
        var info = stat()
        let precious = try String(contentsOfFile: target, encoding: .utf8)
        #expect(stat(target, &info) == 0 && info.st_mode & 0o777 == 0o644 && precious == "precious\n", "the link's target is untouched")
        // Root's own daemon refuses the folder that is the service's.
        let rootDaemon = try service.cli(["daemon"])
        #expect(rootDaemon.status == 1 && rootDaemon.standardError.contains("belongs to the account ccrelay"), "\(rootDaemon.standardError)")
        try FileManager.default.removeItem(atPath: state + "/alerts.db-wal")

        // The service, as its user, owns its journal; a kick reaches the webhook.
        try Data("[probe]\nmode = off\n".utf8).append(to: service.configPath)
        let daemon = try ChildProcess("/usr/sbin/runuser", ["-u", "ccrelay", "--", "/usr/bin/env"] + service.environment.map { "\($0)=\($1)" }
                                          + [users.programs.path("ccrelay"), "--system", "daemon"], outputFiles: (service.folder + "/daemon.out", service.logPath))
        defer { daemon.stop() }
        #expect(await eventually(timeout: .seconds(30)) { (try? service.state()) == "online" }, "\(service.log)")
        try sim.control("POST", "kick", ["message": "bye"])
        // (setup's own test message was the first)
        #expect(await eventually(timeout: .seconds(20)) { webhook.requests().count == 2 }, "\(service.log)")
        // Root's and a member's commands go through the service.
        let history = try service.cli(["history"])
        #expect(history.status == 0 && history.standardOutput.contains("Logged out"), "\(history.standardOutput)\(history.standardError)")
        let timeline = try service.cli(as: users.member, of: users, ["timeline"])
        #expect(timeline.status == 0 && timeline.standardOutput.contains("online → logged-out"), "\(timeline.standardOutput)\(timeline.standardError)")
        let readerTimeline = try service.cli(as: users.reader, of: users, ["timeline", "--json"])
        #expect(readerTimeline.status == 0, "every local user reads the timeline, as the status: \(readerTimeline.standardError)")
        var journal = stat()
        #expect(stat(state + "/alerts.db", &journal) == 0 && journal.st_uid == getpwnam("ccrelay").pointee.pw_uid, "the journal is the service's")
        let cleared = try service.cli(["badge", "clear"])
        #expect(cleared.status == 0, "\(cleared.standardError)")
    }
}

extension SystemServiceTests {
    /// A lab box behind a Srun portal (issue 32): the system service logs in,
    /// a wrong password is said with the system's own fix, the portal ending
    /// the session reaches the webhook and the session is won back.
    @Test func aSrunSystemServiceSaysItsOwnFixAndForwardsThePortalsEnd() async throws {
        let bus = try PrivateBus(systemPolicy: Self.packaging + "/io.github.ccrelay.CCRelay.system.conf")
        let sim = try CCSimProcess(tls: false, ["--protocol", "srun", "--user", "2024000001:right-pw"])
        let webhook = try RelayRecorder(.webhook)
        let service = try Service(bus: bus)
        let passwordFile = service.folder + "/etc/password"
        try "wrong-pw\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
        chmod(passwordFile, 0o600)
        try service.write(config: """
            [server]
            protocol = srun
            url = \(sim.url)
            [auth]
            user = 2024000001
            password-file = \(passwordFile)
            [srun]
            poll = 10
            [probe]
            mode = off
            [relay]
            webhook = http://127.0.0.1:\(webhook.port)/hook
            """)
        let daemon = try service.start()
        defer { daemon.stop() }
        #expect(await eventually(timeout: .seconds(30)) { service.log.contains("alert credentials") }, "\(service.log)")
        #expect(service.log.contains("sudo ccrelay --system setup --edit") && !service.log.contains("--save-password"),
                "the system service's own fix: \(service.log)")
        try "right-pw\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
        chmod(passwordFile, 0o600)
        _ = try service.cli(["login"])
        #expect(await eventually(timeout: .seconds(30)) { (try? service.state()) == "online" }, "\(service.log)")
        let status = try JSONSerialization.jsonObject(with: Data(try service.cli(["status", "--json"]).standardOutput.utf8)) as? [String: Any]
        #expect((status?["account"] as? [String: Any])?["devices"] as? Int == 1, "\(String(describing: status))")
        try sim.control("DELETE", "sessions", ["account": "2024000001"])
        #expect(await eventually(timeout: .seconds(30)) {
            webhook.requests().contains { RelayRecorder.body($0)["kind"] as? String == "logged-out" }
        }, "\(service.log)")
        #expect(await eventually(timeout: .seconds(30)) { (try? service.state()) == "online" && (try? sim.control("GET", "sessions") as? [Any])?.count == 1 },
                "won back: \(service.log)")
    }
}

extension SystemServiceTests.Service {
    /// Another instance (nil: the main service) with the same folders: one /etc/ccrelay, as on one machine.
    init(bus: PrivateBus, instance: String?, sharing other: Self) throws {
        folder = other.folder
        environment = other.environment
        self.instance = instance
    }
}

extension String {
    /// Appends this text to the file at `path`.
    func appendLine(to path: String) throws { try Data(utf8).append(to: path) }
}

extension Data {
    /// Appends these bytes to the file at `path`.
    func append(to path: String) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        handle.seekToEndOfFile()
        handle.write(self)
    }
}
