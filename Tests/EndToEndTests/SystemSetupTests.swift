import Foundation
import TestSupport
import Testing

/// Issue 33.7: `sudo ccrelay --system setup` offers the push services the
/// user's setup offers, shows why `systemctl enable --now` failed, and reads
/// `~` in the home of whoever ran sudo, in the system service's serialized suite.
extension SystemServiceTests {
    var ptyDriver: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/pty_drive.py").path
    }

    /// The users, the system bus, a campus and a service folder as the package leaves it, for setup.
    func serviceToSetUp() throws -> (TestUsers, PrivateBus, CCSimProcess, Service) {
        let users = try TestUsers(serviceUser: true)
        let bus = try PrivateBus(systemPolicy: Self.packaging + "/io.github.ccrelay.CCRelay.system.conf")
        return (users, bus, try CCSimProcess(), try freshService(bus))
    }

    @Test(.enabled(if: getuid() == 0, "needs root: setup --system is for root"))
    func systemSetupOffersThePushServicesOfTheUsersSetup() throws {
        let (users, bus, sim, service) = try serviceToSetUp()
        let ntfy = try RelayRecorder(.ntfy)
        let pki = TestPKI.shared
        let target = "ntfy://127.0.0.1:\(ntfy.port)/ccrelay-box"
        let steps = [("User name for a password login", ""), ("Forwarding URL (empty: the system log only): ", target)]
        let result = try run(ptyDriver, steps.flatMap { ["--step", "\($0.0)=>\($0.1)"] }
                             + ["--", DaemonRig.ccrelay, service.system, "setup", "--protocol", "cc1", "--server", sim.url, "--certificate",
                                pki.clientCertificate, "--key", pki.clientKey, "--ca-file", pki.caCertificate, "--no-autostart"],
                             environment: service.environment)
        #expect(result.status == 0, "\(result.standardOutput)\n\(result.standardError)")
        for offered in ["bark://DEVICE_KEY", "schan://SENDKEY", "pushplus://TOKEN", "wecombot://KEY", "dingtalk://TOKEN", "tgram://"] {
            #expect(result.standardOutput.contains(offered), "\(offered) offered: \(result.standardOutput)")
        }
        #expect(try String(contentsOfFile: service.configPath, encoding: .utf8).contains("[relay]\nforward = \(target)\n"))
        #expect(RelayRecorder.body(try #require(ntfy.requests().first))["topic"] as? String == "ccrelay-box")
        // Issue 33.4 for the system service: --forward alone adds a target, with no trial login, the file still the service's alone.
        let second = try run(DaemonRig.ccrelay, [service.system, "setup", "--forward", "ntfy://127.0.0.1:\(ntfy.port)/ccrelay-second"],
                             environment: service.environment)
        #expect(second.status == 0 && second.standardOutput.contains("no campus login was tried"), "\(second.standardOutput)\n\(second.standardError)")
        #expect(try String(contentsOfFile: service.configPath, encoding: .utf8).contains("[relay]\nforward = \(target)\nforward = ntfy://127.0.0.1:\(ntfy.port)/ccrelay-second\n"))
        var info = stat()
        #expect(stat(service.configPath, &info) == 0 && info.st_mode & 0o777 == 0o600 && info.st_uid == getpwnam("ccrelay").pointee.pw_uid)
        #expect(try sim.sessions().count == 1, "the first setup's trial only")
        withExtendedLifetime((users, bus)) {}
    }

    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/systemctl")
                   && !FileManager.default.fileExists(atPath: "/run/systemd/system"),
                   "needs root and systemctl, and no systemd running (the unit would really start)"))
    func systemSetupShowsWhySystemctlFailedAndTheFix() throws {
        let (users, bus, sim, service) = try serviceToSetUp()
        let pki = TestPKI.shared
        let systemctl = try run("/usr/bin/systemctl", ["--quiet", "enable", "--now", "ccrelay.service"])
        try #require(systemctl.status != 0, "systemctl works here; nothing to show")
        let said = try #require(systemctl.standardError.split(separator: "\n").first.map(String.init))
        let result = try run(DaemonRig.ccrelay, [service.system, "setup", "--server", sim.url, "--certificate", pki.clientCertificate,
                                                 "--key", pki.clientKey, "--ca-file", pki.caCertificate, "--yes"], environment: service.environment)
        #expect(result.status == 0, "the configuration is written: \(result.standardError)")
        #expect(result.standardError.contains("systemctl enable --now ccrelay.service failed") && result.standardError.contains(said)
                && result.standardError.contains("journalctl -u ccrelay.service"), "\(result.standardError)")
        withExtendedLifetime((users, bus)) {}
    }

    @Test(.enabled(if: getuid() == 0, "needs root: setup --system is for root"))
    func systemSetupReadsTildeInTheHomeOfWhoeverRanSudo() throws {
        let (users, bus, sim, service) = try serviceToSetUp()
        let pki = TestPKI.shared
        let home = String(cString: try #require(getpwnam(users.reader)?.pointee.pw_dir))
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        try FileManager.default.copyItem(atPath: pki.clientCertificate, toPath: home + "/student.pem")
        try FileManager.default.copyItem(atPath: pki.clientKey, toPath: home + "/student.key")
        let environment = service.environment.merging(["SUDO_USER": users.reader, "HOME": "/root"]) { $1 }
        func setup(_ certificate: String) throws -> CommandResult {
            try run(DaemonRig.ccrelay, [service.system, "setup", "--server", sim.url, "--certificate", certificate, "--key", "~/student.key",
                                        "--ca-file", pki.caCertificate, "--no-autostart", "--yes"], environment: environment)
        }
        let missing = try setup("~/nothere.pem")
        #expect(missing.status == 1 && missing.standardError.contains("~/nothere.pem (\(home)/nothere.pem): No such file"), "\(missing.standardError)")
        let result = try setup("~/student.pem")
        #expect(result.status == 0, "\(result.standardOutput)\n\(result.standardError)")
        #expect(try String(contentsOfFile: service.configPath, encoding: .utf8).contains("ccrelay.d/student.pem"))
        withExtendedLifetime((users, bus)) {}
    }
}
