import Foundation
import TestSupport
import Testing

/// The system service (issue 24) with real parts: `ccrelay --system daemon`
/// with no session bus at all, on a private system bus that runs the policy
/// file the package ships, ccsim over mutual TLS, a webhook recorder, and
/// users made for the test (`useradd`) whose calls the policy judges. One
/// test at a time: they share the group ccrelay a test may make and remove.
@Suite(.serialized, .desktopBudget) struct SystemServiceTests {
    static let packaging = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("packaging").path
    static let noSessionBus = "unix:path=/nonexistent/ccrelay-no-session-bus"

    /// A service's folders (`/etc/ccrelay`, `/var/lib/ccrelay`) and its environment, as systemd sets it.
    struct Service {
        let folder: String
        let environment: [String: String]
        /// An instance of `ccrelay@.service` (nil: `ccrelay.service`).
        var instance: String?
        var system: String { "--system" + (instance.map { "=" + $0 } ?? "") }
        var configPath: String { folder + "/etc/\(instance ?? "ccrelay").conf" }
        var logPath: String { folder + "/daemon.log" }
        var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

        init(bus: PrivateBus, credentials: String? = nil, instance: String? = nil) throws {
            self.instance = instance
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-system-\(UUID().uuidString)").path
            for sub in ["/etc", "/state"] { try FileManager.default.createDirectory(atPath: folder + sub, withIntermediateDirectories: true) }
            var environment = [
                "DBUS_SYSTEM_BUS_ADDRESS": bus.address, "DBUS_SESSION_BUS_ADDRESS": SystemServiceTests.noSessionBus,
                "CONFIGURATION_DIRECTORY": folder + "/etc", "STATE_DIRECTORY": folder + "/state", "XDG_STATE_HOME": folder + "/user-state",
            ]
            if let credentials { environment["CREDENTIALS_DIRECTORY"] = credentials }
            self.environment = environment
        }

        func write(config: String, mode: mode_t = 0o600) throws {
            try config.write(toFile: configPath + ".new", atomically: false, encoding: .utf8)
            chmod(configPath + ".new", mode)
            rename(configPath + ".new", configPath)
        }

        /// Starts the daemon (`launcher`: inside a network namespace, say).
        func start(launcher: [String] = []) throws -> ChildProcess {
            let command = launcher + [DaemonRig.ccrelay, system, "daemon"]
            return try ChildProcess(command[0], Array(command.dropFirst()), environment: environment,
                                    outputFiles: (folder + "/daemon.out", logPath))
        }

        func cli(_ arguments: [String]) throws -> CommandResult {
            try run(DaemonRig.ccrelay, [system] + arguments, environment: environment)
        }

        /// `ccrelay --system ARGUMENTS` as `user` (runuser), with only the bus
        /// addresses: the copy in `users.programs`, which that user can reach.
        func cli(as user: String, of users: TestUsers, _ arguments: [String]) throws -> CommandResult {
            try run("/usr/sbin/runuser", ["-u", user, "--", "/usr/bin/env", "DBUS_SYSTEM_BUS_ADDRESS=\(environment["DBUS_SYSTEM_BUS_ADDRESS"]!)",
                                          "DBUS_SESSION_BUS_ADDRESS=\(SystemServiceTests.noSessionBus)", users.programs.path("ccrelay"), system] + arguments)
        }

        func state() throws -> String? {
            let output = try cli(["status", "--json"]).standardOutput
            return (try? JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])?["state"] as? String
        }
    }

    /// Users made for one test and removed after it: `reader` in no group, `member` in the group ccrelay;
    /// and the programs they run, copied where they can reach them (the checkout may be private: issue 31).
    final class TestUsers {
        let reader = "ccrt-r-\(UUID().uuidString.prefix(6).lowercased())"
        let member = "ccrt-m-\(UUID().uuidString.prefix(6).lowercased())"
        let programs: ProgramsForOtherUsers
        private var madeGroup = false
        private var madeServiceUser = false

        /// With `serviceUser`, also the user `ccrelay` the package makes, when this machine has none.
        init(serviceUser: Bool = false) throws {
            programs = try ProgramsForOtherUsers()
            if try run("/usr/bin/getent", ["group", "ccrelay"]).status != 0 {
                guard try run("/usr/sbin/groupadd", ["--system", "ccrelay"]).status == 0 else { throw TestSetupError("groupadd ccrelay failed") }
                madeGroup = true
            }
            if serviceUser, try run("/usr/bin/getent", ["passwd", "ccrelay"]).status != 0 {
                let made = try run("/usr/sbin/useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "-g", "ccrelay", "ccrelay"])
                guard made.status == 0 else { throw TestSetupError("useradd ccrelay: \(made.standardError)") }
                madeServiceUser = true
            }
            for (user, groups) in [(reader, [String]()), (member, ["-G", "ccrelay"])] {
                let made = try run("/usr/sbin/useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin"] + groups + [user])
                guard made.status == 0 else { throw TestSetupError("useradd \(user): \(made.standardError)") }
            }
            try programs.check(as: reader)
        }

        deinit {
            for user in [reader, member] + (madeServiceUser ? ["ccrelay"] : []) { _ = try? run("/usr/sbin/userdel", [user]) }
            if madeGroup { _ = try? run("/usr/sbin/groupdel", ["ccrelay"]) }
        }
    }

    @Test(.enabled(if: getuid() == 0, "needs root: it makes users (useradd) and runs the CLI as them (runuser)"))
    func aBoxWithoutADesktopStaysOnlineReportsAKickAndIsSteeredUnderThePolicy() async throws {
        // The group first, as the package makes it: the bus reads the policy's group when it starts.
        let users = try TestUsers()
        let bus = try PrivateBus(systemPolicy: Self.packaging + "/io.github.ccrelay.CCRelay.system.conf")
        let sim = try CCSimProcess(["--interval", "2", "--timeout", "8"])
        let webhook = try RelayRecorder(.webhook)
        let service = try Service(bus: bus)
        try service.write(config: sim.configuration(extra: "[relay]\nwebhook = http://127.0.0.1:\(webhook.port)/hook"))
        let daemon = try service.start()
        defer { daemon.stop() }
        #expect(await eventually(timeout: .seconds(30)) { (try? service.state()) == "online" }, "\(service.log)")
        #expect(!service.log.contains("session bus"), "no session bus is asked for: \(service.log)")

        let read = try service.cli(as: users.reader, of: users, ["status"])
        #expect(read.status == 0 && read.standardOutput.contains("online"), "every local user reads: \(read.standardError)")
        let refused = try service.cli(as: users.reader, of: users, ["logout"])
        #expect(refused.status == 1 && refused.standardError.contains("only root and members of the group ccrelay"),
                "\(refused.standardOutput)\(refused.standardError)")
        #expect(try service.state() == "online", "the refused call did nothing")

        // A kick: forwarded, and in the system log at priority crit.
        try sim.control("POST", "kick", ["message": "下线"])
        #expect(await eventually(timeout: .seconds(20)) { !webhook.requests().isEmpty }, "\(service.log)")
        #expect(RelayRecorder.body(webhook.requests()[0])["kind"] as? String == "logged-out")
        #expect(service.log.contains("<2>ccrelay: alert logged-out: "), "\(service.log)")
        let history = try service.cli(as: users.reader, of: users, ["history", "--limit", "3"])
        #expect(history.status == 0 && history.standardOutput.contains("Logged out"), "\(history.standardOutput)\(history.standardError)")

        // A member of the group steers it; so does root.
        let login = try service.cli(as: users.member, of: users, ["login"])
        #expect(login.status == 0, "\(login.standardOutput)\(login.standardError)")
        #expect(await eventually(timeout: .seconds(20)) { (try? service.state()) == "online" })
        let logout = try service.cli(["logout"])
        #expect(logout.status == 0, "\(logout.standardError)")
        #expect(await eventually(timeout: .seconds(20)) { (try? service.state()) == "offline" }, "a requested logout is offline")
    }

    /// `ccrelay@.service`: two instances beside the service, each on its own
    /// bus name, configuration and journal, under the same policy.
    @Test(.enabled(if: getuid() == 0, "needs root: it makes users (useradd) and runs the CLI as them (runuser)"))
    func instancesOfTheTemplateRunBesideTheServiceEachUnderThePolicy() async throws {
        let users = try TestUsers()
        let bus = try PrivateBus(systemPolicy: Self.packaging + "/io.github.ccrelay.CCRelay.system.conf")
        let sim = try CCSimProcess(["--interval", "2", "--timeout", "8"])
        let main = try Service(bus: bus)
        let lab = try Service(bus: bus, instance: "lab")
        let dorm = try Service(bus: bus, instance: "dorm")
        var daemons: [ChildProcess] = []
        defer { daemons.forEach { $0.stop() } }
        for service in [main, lab, dorm] {
            try service.write(config: sim.configuration())
            daemons.append(try service.start())
        }
        for service in [main, lab, dorm] {
            #expect(await eventually(timeout: .seconds(30)) { (try? service.state()) == "online" }, "\(service.system): \(service.log)")
        }
        let read = try lab.cli(as: users.reader, of: users, ["status"])
        #expect(read.status == 0 && read.standardOutput.contains("online"), "\(read.standardError)")
        let refused = try lab.cli(as: users.reader, of: users, ["logout"])
        #expect(refused.status == 1 && refused.standardError.contains("only root and members of the group ccrelay"), "\(refused.standardError)")
        let steered = try lab.cli(as: users.member, of: users, ["logout"])
        #expect(steered.status == 0, "\(steered.standardError)")
        #expect(await eventually(timeout: .seconds(20)) { (try? lab.state()) == "offline" })
        #expect(try main.state() == "online" && dorm.state() == "online", "the others carry on")
        #expect(FileManager.default.fileExists(atPath: lab.folder + "/state/alerts.db"))
        #expect(try run(DaemonRig.ccrelay, ["--system=2lab", "status"]).status == 2, "not an instance name")
    }

    /// `ccrelay --system setup` as root: files the service user can read and
    /// nobody else, the password in a file, and the service, run as the user
    /// `ccrelay`, gets online with them.
    @Test(.enabled(if: getuid() == 0, "needs root: setup --system is for root, and the service runs as the user ccrelay"))
    func setupForTheSystemServiceWritesWhatOnlyTheServiceCanRead() async throws {
        let users = try TestUsers(serviceUser: true)
        let bus = try PrivateBus(systemPolicy: Self.packaging + "/io.github.ccrelay.CCRelay.system.conf")
        let sim = try CCSimProcess(["--interval", "2", "--timeout", "8", "--user", "student:s3cret"])
        let service = try Service(bus: bus)
        // systemd makes these; here the configuration folder is setup's to make.
        try FileManager.default.removeItem(atPath: service.folder + "/etc")
        chown(service.folder + "/state", getpwnam("ccrelay").pointee.pw_uid, getgrnam("ccrelay").pointee.gr_gid)
        chmod(service.folder, 0o755)
        let pki = TestPKI.shared
        let setup = try run(DaemonRig.ccrelay, ["--system", "setup", "--server", sim.url, "--certificate", pki.clientCertificate, "--key", pki.clientKey,
                                                "--ca-file", pki.caCertificate, "--user", "student", "--password-stdin", "--no-autostart", "--yes"],
                            environment: service.environment, input: "s3cret\n")
        #expect(setup.status == 0, "\(setup.standardOutput)\(setup.standardError)")
        #expect(setup.standardOutput.contains("ccrelay --system status"), "the one command that shows its state: \(setup.standardOutput)")
        let group = getgrnam("ccrelay").pointee.gr_gid
        func owned(_ path: String) -> (mode: mode_t, owner: uid_t, group: gid_t)? {
            var info = stat()
            return stat(path, &info) == 0 ? (info.st_mode & 0o777, info.st_uid, info.st_gid) : nil
        }
        // Issue 31.4 and 31.10: the files in the service's own folder; the secrets its user's alone.
        let etc = service.folder + "/etc"
        let files = etc + "/ccrelay.d"
        let key = files + "/" + (pki.clientKey as NSString).lastPathComponent
        let serviceUser = getpwnam("ccrelay").pointee.pw_uid
        for path in [service.configPath, files + "/campus-password", key] {
            let info = owned(path)
            #expect(info?.mode == 0o600 && info?.owner == serviceUser, "\(path): \(String(describing: info))")
        }
        for path in [files + "/" + (pki.clientCertificate as NSString).lastPathComponent, files + "/" + (pki.caCertificate as NSString).lastPathComponent] {
            let info = owned(path)
            #expect(info?.mode == 0o640 && info?.owner == 0 && info?.group == group, "\(path): \(String(describing: info))")
        }
        #expect(owned(etc)?.mode == 0o750 && owned(etc)?.group == group && owned(files)?.mode == 0o750 && owned(files)?.group == group)
        #expect(try FileManager.default.contentsOfDirectory(atPath: etc).sorted() == ["ccrelay.conf", "ccrelay.d"], "nothing staged is left")
        let config = try String(contentsOfFile: service.configPath, encoding: .utf8)
        #expect(config.contains("password-file = \(files)/campus-password") && config.contains("key = \(key)") && !config.contains("s3cret"))
        #expect(!setup.standardOutput.contains("s3cret") && !setup.standardError.contains("s3cret"))

        // No test asks the internet whether traffic gets out.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: service.configPath))
        handle.seekToEndOfFile()
        handle.write(Data("[probe]\nmode = off\n".utf8))
        try handle.close()
        // The service, as its own user, reads them and gets online; a user outside the group cannot read them.
        let daemon = try ChildProcess("/usr/sbin/runuser", ["-u", "ccrelay", "--", "/usr/bin/env"] + service.environment.map { "\($0)=\($1)" }
                                          + [users.programs.path("ccrelay"), "--system", "daemon"], outputFiles: (service.folder + "/daemon.out", service.logPath))
        defer { daemon.stop() }
        #expect(await eventually(timeout: .seconds(30)) { (try? service.state()) == "online" }, "\(service.log)")
        // Issue 31.14: a member may not read the configuration, and is told so (not "does not exist"), with the way to check it.
        let check = try run("/usr/sbin/runuser", ["-u", users.member, "--", "/usr/bin/env", "CONFIGURATION_DIRECTORY=\(etc)",
                                                   users.programs.path("ccrelay"), "--system", "config", "check"])
        #expect(check.status != 0 && check.standardError.contains("sudo ccrelay --system config check") && !check.standardError.contains("create it"),
                "\(check.standardError)")
        for user in [users.reader, users.member] {
            for secret in [key, files + "/campus-password", service.configPath] {
                let peek = try run("/usr/sbin/runuser", ["-u", user, "--", "/bin/cat", secret])
                #expect(peek.status != 0, "\(user) does not read \(secret): the group steers, it does not read secrets")
            }
        }
    }

    @Test func aPasswordComesFromTheCredentialsSystemdPassesAndAReadablePasswordFileIsRefused() async throws {
        let bus = try PrivateBus(systemPolicy: Self.packaging + "/io.github.ccrelay.CCRelay.system.conf")
        let sim = try CCSimProcess(["--interval", "2", "--timeout", "8", "--user", "student:s3cret"])
        let credentials = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-cred-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: credentials) }
        try "s3cret\n".write(toFile: credentials + "/campus-password", atomically: true, encoding: .utf8)
        let service = try Service(bus: bus, credentials: credentials)
        try service.write(config: sim.configuration(extra: "user = student"))
        let daemon = try service.start()
        defer { daemon.stop() }
        #expect(await eventually(timeout: .seconds(30)) { (try? service.state()) == "online" }, "\(service.log)")
        #expect(!service.log.contains("s3cret"), "the password is never logged")

        // A password file others may read: refused with file:line, and the fix.
        let file = service.folder + "/etc/password"
        try "s3cret\n".write(toFile: file, atomically: true, encoding: .utf8)
        chmod(file, 0o644)
        try service.write(config: sim.configuration(extra: "user = student\npassword-file = \(file)"))
        let check = try service.cli(["config", "check"])
        #expect(check.status == 1, "\(check.standardError)")
        #expect(check.standardError.contains("\(service.configPath):10:") && check.standardError.contains("chmod 600 \(file)"),
                "\(check.standardError)")
        chmod(file, 0o600)
        let fixed = try service.cli(["config", "check"])
        #expect(fixed.status == 0 && fixed.standardError.contains("no [relay] target"),
                "a box nobody will hear from is warned about: \(fixed.standardError)")
    }
}
