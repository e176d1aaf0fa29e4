import DBus
import Foundation
import TestSupport
import Testing

/// The real `ccrelay daemon` against ccsim over mutual TLS, with a real dunst
/// on a private session bus; short intervals (2 s) and timeouts (8 s).
@Suite(.desktopBudget) struct DaemonTests {
    static let ccrelay = buildProductsDirectory.appendingPathComponent("ccrelay").path

    typealias Rig = DaemonRig

    @Test func keepsTheSessionAliveAndAKickRaisesTheLogoutAlertWithoutRelogin() async throws {
        let rig = try await Rig()
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 2 }, "\(rig.log)")
        #expect(rig.log.contains("state: online"))
        try rig.sim.control("POST", "kick", ["reason": "kicked", "message": "你已被管理员下线"])
        #expect(await eventually(timeout: .seconds(20)) { rig.log.contains("state: logged-out") }, "\(rig.log)")
        let bubbles = try rig.dunst.closeAllAndReadHistory()
        let logout = bubbles.first { $0.category == "network.disconnected" }
        #expect(logout?.body.contains("你已被管理员下线") == true)
        // "Never a relogin after a kick" is proven on the virtual clock (SessionTests.aKickEndsTheSessionForGood…).
        #expect(try rig.sim.sessions().count == 1)
        #expect(rig.daemon.isRunning)
    }

    @Test func aHangingServerRaisesOneFailureAlertThenBackOnlineClosesIt() async throws {
        let rig = try await Rig()
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        try rig.sim.control("POST", "fault", ["endpoint": "keepalive", "kind": "hang", "count": 1])
        #expect(await eventually(timeout: .seconds(30)) { rig.log.contains("state: failing") }, "\(rig.log)")
        #expect(await eventually(timeout: .seconds(30)) {
            let lines = rig.log.split(separator: "\n")
            guard let failing = lines.lastIndex(of: "ccrelay: state: failing") else { return false }
            return lines[failing...].contains("ccrelay: state: online")
        }, "\(rig.log)")
        // The failure bubble was closed: only "back online" is still on screen.
        #expect(await eventually {
            (try? rig.dunst.control(["count", "displayed"]).standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)) == "1"
        })
        let shown = try rig.shown()
        #expect(shown.filter { $0 == "network.error" }.count == 1, "one failure alert: \(shown)")
        #expect(shown.contains("network.connected"), "back online: \(shown)")
        #expect(!shown.contains("network.disconnected"))
    }

    @Test func sigtermWithLogoutOnExitLogsOutAndExitsZero() async throws {
        let rig = try await Rig(extraConfig: "logout-on-exit = true")
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        kill(rig.daemon.pid, SIGTERM)
        #expect(rig.daemon.wait() == 0)
        #expect(try rig.sim.sessions().first?["reason"] as? String == "logout")
    }

    @Test func sleepHoldsAnInhibitorAndAnExpiryWhileAsleepLeadsToARelogin() async throws {
        let system = try PrivateBus()
        let logind = try await MockSystemService(template: "logind", name: "org.freedesktop.login1", on: system)
        let rig = try await Rig(systemBus: system)
        func inhibitors() async throws -> Int {
            let reply = try await logind.call("org.freedesktop.login1", "/org/freedesktop/login1",
                                              "org.freedesktop.login1.Manager", "ListInhibitors")
            if case .array(_, let items)? = reply.body.first { return items.count }
            return -1
        }
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        #expect(await eventually { (try? await inhibitors()) == 1 }, "a delay inhibitor is held")
        func prepareForSleep(_ starting: Bool) async throws {
            try await logind.call("org.freedesktop.login1", "/org/freedesktop/login1", "org.freedesktop.DBus.Mock", "EmitSignal",
                                  [.string("org.freedesktop.login1.Manager"), .string("PrepareForSleep"), .signature("b"),
                                   .array(element: "v", [.variant(.boolean(starting))])])
        }
        try await prepareForSleep(true)
        #expect(await eventually { rig.log.contains("state: sleeping") }, "\(rig.log)")
        #expect(await eventually { (try? await inhibitors()) == 0 }, "the inhibitor is released before sleep")
        // While "asleep" the server logs the session out.
        try rig.sim.control("POST", "expire")
        try await prepareForSleep(false)
        #expect(await eventually(timeout: .seconds(20)) { (try? rig.sim.sessions().count) == 2 }, "relogin: \(rig.log)")
        #expect(await eventually { (try? await inhibitors()) == 1 }, "a new inhibitor after resume")
        #expect(rig.daemon.isRunning)
    }

    @Test func noNetworkMeansNoRequestsAndNoAlertAndReconnectKeepsAliveAtOnce() async throws {
        let system = try PrivateBus()
        let nm = try await MockSystemService(template: "networkmanager", name: "org.freedesktop.NetworkManager", on: system)
        let rig = try await Rig(simulator: ["--interval", "30", "--timeout", "90"], systemBus: system)
        #expect(await eventually(timeout: .seconds(20)) { rig.log.contains("state: online") }, "\(rig.log)")
        func setState(_ state: UInt32) async throws {
            try await nm.call("org.freedesktop.NetworkManager", "/org/freedesktop/NetworkManager", "org.freedesktop.DBus.Mock",
                              "SetGlobalConnectionState", [.uint32(state)])
        }
        try await setState(20)  // NM_STATE_DISCONNECTED
        #expect(await eventually { rig.log.contains("state: no-network") }, "\(rig.log)")
        let before = rig.acceptedReports()
        try await setState(70)  // NM_STATE_CONNECTED_GLOBAL
        #expect(await eventually(timeout: .seconds(10)) { rig.acceptedReports() == before + 1 }, "a keep-alive at once, not after 30 s")
        #expect(try rig.shown().isEmpty, "no alert for a network the user turned off")
    }

    /// A logind session of the test's own on a private system bus: the daemon
    /// runs in it (`XDG_SESSION_ID`), as one started by a desktop's autostart does.
    static func logindWithASession(_ id: String) async throws -> (PrivateBus, MockSystemService) {
        let system = try PrivateBus()
        let logind = try await MockSystemService(template: "logind", name: "org.freedesktop.login1", on: system)
        try await logind.call("org.freedesktop.login1", "/org/freedesktop/login1", "org.freedesktop.DBus.Mock", "AddSession",
                              [.string(id), .string("seat0"), .uint32(getuid()), .string("student"), .boolean(true)])
        return (system, logind)
    }

    @Test func aRestartedSessionBusIsRejoinedAndAlertsReachTheNewNotificationServer() async throws {
        let socket = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-bus-\(UUID().uuidString)").path
        // logind says the session lives on, however long the test takes to bring the bus back.
        let (system, logind) = try await Self.logindWithASession("c3")
        let rig = try await Rig(systemBus: system, busSocket: socket, extraEnvironment: ["XDG_SESSION_ID": "c3"])
        defer { withExtendedLifetime(logind) {} }
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        rig.bus.stop()
        #expect(await eventually { rig.log.contains("the session bus went away") }, "\(rig.log)")
        let newBus = try PrivateBus(socketPath: socket)
        let newDunst = try await Dunst(on: newBus)
        #expect(await eventually(timeout: .seconds(20)) { rig.log.contains("reconnected to the session bus") }, "\(rig.log)")
        try rig.sim.control("POST", "kick", ["message": "再见"])
        #expect(await eventually(timeout: .seconds(20)) {
            (try? newDunst.closeAllAndReadHistory().contains { $0.category == "network.disconnected" }) == true
        }, "\(rig.log)")
        #expect(rig.daemon.isRunning)
    }

    /// issue 21: a daemon started by the autostart entry outlived the desktop
    /// session (`dbus-run-session -- sh -c 'ccrelay daemon & sleep 5'`). With
    /// no logind session to ask, its session bus gone for good ends it, logged out first.
    @Test func theDaemonEndsWithItsSessionBusAndLogsOutFirst() async throws {
        let rig = try await Rig(extraConfig: "logout-on-exit = true")
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        rig.bus.stop()
        // (A daemon that does not end fails here; waiting for it would hang the suite.)
        try #require(await eventually(timeout: .seconds(40)) { !rig.daemon.isRunning }, "\(rig.log)")
        #expect(rig.daemon.wait() == 0)
        #expect(try rig.sim.sessions().first?["reason"] as? String == "logout", "\(rig.log)")
        #expect(rig.log.contains("no logind session says the desktop lives on; stopping with it"), "\(rig.log)")
    }

    /// issue 21: logind closing the session the daemon runs in (a logout on XFCE, LXQt, MATE) ends it.
    @Test func theDaemonEndsWhenLogindClosesItsSession() async throws {
        let (system, logind) = try await Self.logindWithASession("c7")
        let rig = try await Rig(extraConfig: "logout-on-exit = true", systemBus: system, extraEnvironment: ["XDG_SESSION_ID": "c7"])
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        #expect(rig.daemon.isRunning)
        try await logind.call("org.freedesktop.login1", "/org/freedesktop/login1/session/c7", "org.freedesktop.DBus.Mock",
                              "UpdateProperties", [.string("org.freedesktop.login1.Session"),
                                                   .dictionary(key: "s", value: "v", [DictEntry(.string("State"), .variant(.string("closing")))])])
        try #require(await eventually(timeout: .seconds(20)) { !rig.daemon.isRunning }, "\(rig.log)")
        #expect(rig.daemon.wait() == 0)
        #expect(rig.log.contains("the desktop session ended (logind is closing it)"), "\(rig.log)")
        #expect(try rig.sim.sessions().first?["reason"] as? String == "logout")
    }

    @Test func aCertificateExpiringWithinAWeekIsAnnounced() async throws {
        let pki = TestPKI.shared
        let rig = try await Rig(certificate: (pki.expiringCertificate, pki.expiringKey))
        #expect(await eventually(timeout: .seconds(20)) {
            let bubbles = (try? rig.dunst.closeAllAndReadHistory()) ?? []
            return bubbles.contains { $0.category == "x-ccrelay.auth" && ($0.body.contains("expires in 2 days") || $0.body.contains("expires in 3 days")) }
        }, "\(rig.log)")
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "the session still works")
    }

    @Test func passwordLoginTakesThePasswordFromTheKeyring() async throws {
        let keyringHolder = LockedBox<GnomeKeyring?>(nil)
        let rig = try await Rig(
            extraConfig: "[auth]\nuser = 20231234", simulator: ["--interval", "2", "--timeout", "8", "--user", "20231234:秘密 pw"],
            useCertificate: false
        ) { bus in
            keyringHolder.set(try await GnomeKeyring(on: bus))
            let saved = try run(DaemonTests.ccrelay, ["login", "--save-password", "--user", "20231234", "--password-stdin"],
                                environment: bus.environment, input: "秘密 pw\n")
            guard saved.status == 0 else { throw TestSetupError("saving the password failed: \(saved.standardError)") }
        }
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        #expect(try rig.sim.sessions().first?["user"] as? String == "20231234")
        #expect(!rig.log.contains("秘密"), "the password is never logged")
    }

    @Test func aCampusNoticeIsShownOnceEvenAcrossRestarts() async throws {
        let rig = try await Rig()
        try rig.sim.control("POST", "notice", ["id": "n-restart", "title": "网络维护通知", "body": "今晚 23:00 维护"])
        func notices() -> Int {
            ((try? rig.dunst.closeAllAndReadHistory()) ?? []).filter { $0.category == "x-ccrelay.notice" }.count
        }
        #expect(await eventually(timeout: .seconds(20)) { notices() == 1 }, "\(rig.log)")
        let reports = rig.acceptedReports()
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= reports + 2 }, "repeated in later replies")
        kill(rig.daemon.pid, SIGTERM)
        #expect(rig.daemon.wait() == 0)
        let again = try ChildProcess(DaemonTests.ccrelay, ["daemon", "--config", rig.configPath], environment: rig.environment,
                                     captureOutput: false)
        let before = rig.acceptedReports()
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= before + 2 }, "the new daemon is online")
        #expect(notices() == 1, "not shown again after a restart")
        again.stop()
    }

    @Test func aKeyOthersCanReadStopsTheStartWithTheFix() throws {
        let pki = TestPKI.shared
        let open = pki.directory + "/daemon-open.key"
        try? FileManager.default.removeItem(atPath: open)
        try FileManager.default.copyItem(atPath: pki.clientKey, toPath: open)
        chmod(open, 0o644)
        let config = pki.directory + "/daemon-open.conf"
        try "[server]\nurl = https://127.0.0.1:9/\n[auth]\ncertificate = \(pki.clientCertificate)\nkey = \(open)\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        chmod(config, 0o600)
        // Without a session bus to wait on, it stops with the fix.
        let result = try run(Self.ccrelay, ["daemon", "--config", config], environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"])
        #expect(result.status == 1)
        #expect(result.standardError.contains("chmod 600 \(open)"))
    }
}

/// Not set up is a state, not a crash (issue 13): the daemon waits on the bus
/// as `unconfigured`, says what to fix, and starts when the file is usable.
@Suite(.desktopBudget) struct UnconfiguredDaemonTests {
    @Test func notSetUpIsAStateAndAUsableFileStartsTheSession() async throws {
        let bus = try PrivateBus()
        let sim = try CCSimProcess(tls: false)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-unset-\(UUID().uuidString)").path
        let path = folder + "/config/ccrelay.conf"
        var environment = bus.environment
        environment["XDG_STATE_HOME"] = folder + "/state"
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=/nonexistent/ccrelay-no-system-bus"
        let daemon = try ChildProcess(DaemonRig.ccrelay, ["daemon", "--config", path], environment: environment,
                                      outputFiles: (folder + ".out", folder + ".log"))
        defer { daemon.stop() }
        func log() -> String { (try? String(contentsOfFile: folder + ".log", encoding: .utf8)) ?? "" }
        func status() -> [String: Any]? {
            guard let result = try? run(DaemonRig.ccrelay, ["status", "--json"], environment: environment), result.status == 0 else { return nil }
            return try? JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
        }
        #expect(await eventually(timeout: .seconds(20)) { status()?["state"] as? String == "unconfigured" }, "\(log())")
        #expect((status()?["last_error"] as? String)?.contains(path) == true, "\(status() ?? [:])")
        #expect(status()?["last_error_code"] as? String == "unconfigured")
        let text = try run(DaemonRig.ccrelay, ["status"], environment: environment)
        // What to do comes first (issue 21): the command, then the file.
        #expect((status()?["last_error"] as? String)?.hasPrefix("Not set up: run ccrelay setup") == true, "\(status() ?? [:])")
        #expect(text.standardOutput.contains("unconfigured") && text.standardOutput.contains("write \(path)"), "\(text.standardOutput)")
        #expect(try run(DaemonRig.ccrelay, ["login"], environment: environment).standardError.contains("not set up"))
        // The tray says so too, and offers "Set up…" (a login cannot work yet).
        let watcher = try await RecordingWatcher(on: bus)
        #expect(await eventually { watcher.service != nil })
        let service = try #require(watcher.service)
        let tray = try await watcher.properties(of: service)
        #expect(tray["IconName"]?.get(String.self) == "io.github.ccrelay.CCRelay-setup" && tray["Status"]?.get(String.self) == "Active")
        let menu = try await watcher.menu(of: service).entries
        #expect(menu.first?.1 == "Not set up yet")
        #expect(menu.first { $0.1 == "Log in" }?.2 == false && menu.first { $0.1 == "Set up…" }?.2 == true, "\(menu)")

        // A file with a mistake: still waiting, and the problem names its line.
        try "[server]\nurl = not a url\n".write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o600)
        #expect(await eventually(timeout: .seconds(20)) { (status()?["last_error"] as? String)?.contains("ccrelay.conf:2") == true },
                "\(status() ?? [:]) \(log())")
        #expect(daemon.isRunning)

        // Fixed: the same process starts the session.
        try "[server]\nurl = \(sim.url)\n".write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o600)
        #expect(await eventually(timeout: .seconds(30)) { status()?["state"] as? String == "online" }, "\(status() ?? [:]) \(log())")
        #expect(daemon.isRunning, "the same daemon, exec'd with the configuration")
        #expect(try sim.sessions().count == 1)
        try? FileManager.default.removeItem(atPath: folder)
    }
}

/// A configuration that exists but cannot be used alerts once (issue 23):
/// a critical bubble per distinct problem, journaled once, closed (and read)
/// once the files are usable and the daemon started with them.
@Suite(.desktopBudget) struct BrokenConfigurationTests {
    func history(_ rig: DaemonRig) -> [[String: Any]] {
        guard let output = try? rig.cli(["history", "--json"]).standardOutput else { return [] }
        return (try? JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]]) ?? []
    }

    func displayed(_ rig: DaemonRig) -> Int {
        Int((try? rig.dunst.control(["count", "displayed"]).standardOutput)?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? -1
    }

    func status(_ rig: DaemonRig) -> [String: Any] {
        let output = (try? rig.cli(["status", "--json"]).standardOutput) ?? ""
        return (try? JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any]) ?? [:]
    }

    /// Replaces the configuration as `ccrelay setup` does: a 0600 file renamed over it.
    func replace(_ path: String, with text: String) throws {
        try text.write(toFile: path + ".new", atomically: false, encoding: .utf8)
        chmod(path + ".new", 0o600)
        #expect(rename(path + ".new", path) == 0)
    }

    /// A key that does not belong to the certificate, and one encrypted with a passphrase:
    /// the `credentials` alert names the key's line; fixing the file closes it at the first login.
    @Test(arguments: ["mismatched", "encrypted"])
    func anUnusableKeyAlertsOnceAndTheFixClosesIt(_ which: String) async throws {
        let pki = TestPKI.shared
        let rig = try await DaemonRig(certificate: (pki.clientCertificate, which == "mismatched" ? pki.strangerKey : pki.encryptedKey))
        defer { rig.daemon.stop() }
        #expect(await eventually(timeout: .seconds(20)) { status(rig)["state"] as? String == "unconfigured" }, "\(rig.log)")
        #expect(await eventually(timeout: .seconds(20)) { history(rig).count == 1 }, "\(history(rig)) \(rig.log)")
        let alert = try #require(history(rig).first)
        #expect(alert["kind"] as? String == "credentials" && alert["urgency"] as? String == "critical", "\(alert)")
        #expect((alert["body"] as? String)?.contains("\(rig.configPath):6:") == true, "the key's line: \(alert)")
        #expect(await eventually { displayed(rig) == 1 }, "one bubble on screen")
        #expect(status(rig)["badge"] as? Int == 1)
        // The file written again with the same problem: no second alert, no second bubble.
        let broken = try String(contentsOfFile: rig.configPath, encoding: .utf8)
        // (No second alert for the same problem: DaemonCoreTests.aBrokenConfigurationIsSaidOnce…, on the virtual clock.)
        try replace(rig.configPath, with: broken)
        #expect(history(rig).count == 1 && displayed(rig) == 1, "\(history(rig))")
        // Fixed: the same process starts with it, logs in, and the alert is read and its bubble gone.
        try replace(rig.configPath, with: broken.replacingOccurrences(
            of: "key = \(which == "mismatched" ? pki.strangerKey : pki.encryptedKey)", with: "key = \(pki.clientKey)"))
        #expect(await eventually(timeout: .seconds(30)) { status(rig)["state"] as? String == "online" }, "\(rig.log)")
        #expect(await eventually(timeout: .seconds(10)) { status(rig)["badge"] as? Int == 0 }, "\(status(rig))")
        #expect(await eventually(timeout: .seconds(10)) { displayed(rig) == 0 }, "the bubble closed: \(rig.log)")
    }

    /// Anything else (here a CA file that is a folder) is a `not-set-up` alert, which the
    /// daemon that starts with the fixed file closes at once.
    @Test func anUnusableCAFileIsANotSetUpAlertClosedWhenTheDaemonStarts() async throws {
        let pki = TestPKI.shared
        let rig = try await DaemonRig()
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        rig.daemon.stop()
        let good = try String(contentsOfFile: rig.configPath, encoding: .utf8)
        let folder = (rig.configPath as NSString).deletingLastPathComponent
        try replace(rig.configPath, with: good.replacingOccurrences(of: "ca-file = \(pki.caCertificate)", with: "ca-file = \(folder)"))
        let waiting = try rig.startDaemon(logPath: rig.logPath + ".2")
        defer { waiting.stop() }
        #expect(await eventually(timeout: .seconds(20)) { history(rig).first?["kind"] as? String == "not-set-up" }, "\(history(rig))")
        let alert = try #require(history(rig).first)
        #expect((alert["body"] as? String)?.contains("\(rig.configPath):3:") == true && alert["urgency"] as? String == "critical", "\(alert)")
        #expect(await eventually { displayed(rig) == 1 })
        try replace(rig.configPath, with: good)
        #expect(await eventually(timeout: .seconds(30)) { status(rig)["state"] as? String == "online" })
        #expect(await eventually(timeout: .seconds(10)) { status(rig)["badge"] as? Int == 0 && displayed(rig) == 0 }, "\(status(rig))")
    }
}

/// The autostart entry's command (issue 13): one daemon, whoever starts it
/// and however often; nothing for a user who never set ccrelay up.
@Suite(.desktopBudget) struct AutostartTests {
    @Test func autostartStartsOneDaemonAndNothingWithoutAConfiguration() async throws {
        let rig = try await DaemonRig()
        #expect(await eventually(timeout: .seconds(20)) { rig.log.contains("state: online") }, "\(rig.log)")
        // A second start at login (the entry, after the unit): it sees the daemon and leaves.
        var environment = rig.environment
        environment["PATH"] = "/nonexistent"  // and no systemctl to reach
        let again = try run(DaemonRig.ccrelay, ["daemon", "--autostart", "--config", rig.configPath], environment: environment)
        #expect(again.status == 0 && again.standardError.isEmpty, "\(again.standardError)")
        #expect(rig.daemon.isRunning)
        #expect(try rig.sim.sessions().count == 1)
        // A user who never set it up: the first login offers setup once (issue 21), with a bubble
        // whose action opens it; later logins start nothing.
        let bus = try PrivateBus()
        let dunst = try await Dunst(on: bus)
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-offer-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: state) }
        var fresh = bus.environment
        fresh["XDG_STATE_HOME"] = state
        fresh["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=/nonexistent/ccrelay-no-system-bus"
        fresh["LANG"] = "C.UTF-8"
        let first = try ChildProcess(DaemonRig.ccrelay, ["daemon", "--autostart", "--config", "/nonexistent/ccrelay.conf"],
                                     environment: fresh, captureOutput: false)
        defer { first.stop() }
        let offered = await eventually(timeout: .seconds(20)) {
            ((try? dunst.closeAllAndReadHistory()) ?? []).contains { $0.category == "x-ccrelay.status" && $0.body.contains("run ccrelay setup") }
        }
        #expect(offered, "one bubble says how to set up")
        #expect(FileManager.default.fileExists(atPath: state + "/ccrelay/setup-offered"))
        first.stop()
        #expect(try await bus.waitForNameToVanish("io.github.ccrelay.CCRelay"))
        let nobody = try run(DaemonRig.ccrelay, ["daemon", "--autostart", "--config", "/nonexistent/ccrelay.conf"], environment: fresh)
        #expect(nobody.status == 0 && nobody.standardError.isEmpty)
        #expect(try await bus.waitForName("io.github.ccrelay.CCRelay", timeout: .seconds(1)) == false, "offered once, not at every login")
    }
}
