import Foundation
import TestSupport
import Testing

/// `ccrelay doctor` (issue 25): a report that is right about a healthy setup,
/// never crashes without a daemon, a bus or a readable configuration, and
/// never shows an identifier.
@Suite(.desktopBudget) struct DoctorTests {
    func findings(_ output: String) -> [[String: Any]] {
        (try? JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]]) ?? []
    }

    @Test func aHealthySetupIsReportedAndNoIdentifierShows() async throws {
        let rig = try await DaemonRig()
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        // The configuration doctor reads names an account: it must not appear.
        let config = rig.configPath + ".doctor"
        try (String(contentsOfFile: rig.configPath, encoding: .utf8).replacingOccurrences(of: "[keepalive]", with: "[auth]\nuser = 20231234\n[keepalive]"))
            .write(toFile: config, atomically: true, encoding: .utf8)
        chmod(config, 0o600)
        let result = try rig.cli(["doctor", "--json", "--config", config], environment: ["HOME": "/home/student-x"])
        let report = findings(result.standardOutput)
        func verdict(_ area: String) -> String? { report.first { $0["area"] as? String == area }?["verdict"] as? String }
        #expect(verdict("configuration") == "ok", "\(report)")
        #expect(verdict("daemon") == "ok" && verdict("notifications") == "ok", "\(report)")
        let daemon = report.first { $0["area"] as? String == "daemon" }?["text"] as? String ?? ""
        #expect(daemon.contains("online") && daemon.contains("127.0.x.x"), "the address cut to its first two parts: \(daemon)")
        #expect(!result.standardOutput.contains("20231234"), "the account never shows")
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        // The network lines: libcurl, the certificate, the server over IPv4 without a login, the timeline.
        func texts(_ area: String) -> [String] { report.filter { $0["area"] as? String == area }.compactMap { $0["text"] as? String } }
        #expect(texts("libraries").first?.contains("libcurl") == true, "\(report)")
        #expect(verdict("certificate") == "ok" && texts("certificate").first?.contains("expires") == true, "\(report)")
        #expect(texts("server").contains { $0.hasPrefix("IPv4 127.0.x.x: name, TCP and TLS ok") }, "\(texts("server"))")
        #expect(texts("timeline").contains { $0.contains("logging-in → online") }, "\(texts("timeline"))")
        #expect(texts("outside").first?.contains("[probe] mode = off") == true, "\(report)")
        #expect(verdict("portal") == "ok" && texts("portal") == ["CC/1: the CC server answers; no URL asked ([probe] mode = off)"], "\(report)")
        #expect(texts("journal").first?.contains("schema 5") == true, "\(report)")
        let sessions = try rig.sim.sessions()
        #expect(sessions.count == 1, "the doctor never logs in: \(sessions.count) sessions")
        let token = try #require(sessions.first?["session"] as? String)
        #expect(!result.standardOutput.contains(token), "the session token never shows")
        let human = try rig.cli(["doctor", "--config", config]).standardOutput
        #expect(human.contains("ok   daemon") && !human.contains("20231234"), "\(human)")
    }

    @Test func withoutADaemonABusOrAReadableConfigurationItSaysSoAndFails() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-doctor-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder + "/ccrelay.conf", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try run(DaemonRig.ccrelay, ["doctor", "--json", "--config", folder + "/ccrelay.conf"], environment: [
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus", "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/bus",
            "XDG_STATE_HOME": folder + "/state",
        ])
        #expect(result.status == 1, "\(result.standardOutput)\(result.standardError)")
        let report = findings(result.standardOutput)
        #expect(report.contains { $0["area"] as? String == "configuration" && $0["verdict"] as? String == "fail"
            && ($0["text"] as? String)?.contains("not a regular file") == true || ($0["text"] as? String)?.contains("directory") == true },
                "\(report)")
        #expect(report.contains { $0["area"] as? String == "daemon" && $0["verdict"] as? String == "fail" }, "\(report)")
        #expect(report.contains { $0["area"] as? String == "session bus" }, "\(report)")
        #expect(report.allSatisfy { $0["verdict"] as? String != "fail" || $0["fix"] is String || $0["area"] as? String == "configuration" },
                "every fail says its fix")
    }

    /// A server that refuses the student certificate in the handshake: the
    /// server line fails with the reason and the fix; nothing logs in.
    @Test func aServerThatRefusesTheCertificateIsAFailWithTheReasonAndTheFix() async throws {
        let pki = TestPKI.shared
        let server = try await TLSServerProcess(certificate: pki.serverCertificate, key: pki.serverKey, clientCA: pki.caCertificate)
        let rig = try await DaemonRig(certificate: (pki.strangerCertificate, pki.strangerKey), serverURL: server.url)
        let result = try rig.cli(["doctor", "--json", "--config", rig.configPath])
        let report = findings(result.standardOutput)
        let line = report.first { $0["area"] as? String == "server" && ($0["text"] as? String)?.hasPrefix("IPv4") == true }
        #expect(line?["verdict"] as? String == "fail", "\(report)")
        #expect((line?["text"] as? String)?.contains("refused your student certificate") == true, "\(report)")
        #expect((line?["fix"] as? String)?.contains("ccrelay setup") == true, "\(report)")
        #expect(result.status == 1)
    }

    // MARK: With the outside probe on (the default), whatever the network does

    /// A TCP port that takes connections and never says a word (a server or
    /// probe endpoint whose answers are lost): what the old doctor waited on forever.
    final class SilentPort: Sendable {
        let process: ChildProcess
        let port: Int

        init() throws {
            process = try ChildProcess("/usr/bin/python3", ["-c", """
                import socket, time
                s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
                print(s.getsockname()[1], flush=True)
                held = []
                while True:
                    c, _ = s.accept(); held.append(c)
                """])
            port = Int(process.readLine() ?? "") ?? 0
        }

        deinit { process.stop(signal: SIGKILL) }
    }

    /// Runs the doctor in the rig's environment with `[probe] mode = auto` and
    /// `urls`, against `server`; its output, exit status and how long it took.
    func doctorWithTheProbeOn(_ rig: DaemonRig, server: String? = nil, urls: [String]) throws -> (CommandResult, Duration) {
        var text = try String(contentsOfFile: rig.configPath, encoding: .utf8)
        if let server { text = text.replacingOccurrences(of: "url = \(rig.sim.url)", with: "url = \(server)") }
        text += "\n[probe]\nmode = auto\nurls = \(urls.joined(separator: ", "))\n"
        let config = rig.configPath + ".probe"
        try text.write(toFile: config, atomically: true, encoding: .utf8)
        chmod(config, 0o600)
        let clock = ContinuousClock()
        let start = clock.now
        let result = try rig.cli(["doctor", "--config", config])
        return (result, clock.now - start)
    }

    /// The documented bound (ccrelay(1)): about 20 s for the network lines, a
    /// few seconds for each bus; asserted with room for a loaded runner.
    static let bound = Duration.seconds(45)

    @Test func withTheProbeOnAWorkingServerAndProbeAnswerWithinTheBound() async throws {
        let probe = try OutsideProbeServer()
        let rig = try await DaemonRig()
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        let (result, took) = try doctorWithTheProbeOn(rig, urls: [probe.v4("generate_204")])
        #expect(took < Self.bound, "took \(took)")
        let out = result.standardOutput
        #expect(out.contains("ok   server") && out.contains("name, TCP and TLS ok"), "\(out)")
        #expect(out.contains("ok   outside") && out.contains("IPv4 ok"), "the probe answered: \(out)")
        #expect(out.contains("ok   portal        CC/1: the CC server answers; http://127.0.x.x:"), "nothing in the way of the probe's URL: \(out)")
        #expect(!out.contains("not finished"), "\(out)")
    }

    @Test func withTheProbeOnARefusedServerAndHangingProbesFinishWithinTheBound() async throws {
        let probe = try OutsideProbeServer()
        let rig = try await DaemonRig()
        // A port nobody listens on: the connection is refused at once.
        let closed = try SilentPort()
        let refusedPort = closed.port
        closed.process.stop(signal: SIGKILL)
        _ = closed.process.wait()
        let hang = [probe.v4("hang"), probe.v4("hang?2"), probe.v4("hang?3")]
        let (result, took) = try doctorWithTheProbeOn(rig, server: "https://127.0.0.1:\(refusedPort)/", urls: hang)
        #expect(took < Self.bound, "took \(took)")
        let out = result.standardOutput
        #expect(out.contains("server") && out.contains("no connection"), "\(out)")
        #expect(out.contains("outside") && (out.contains("timeout") || out.contains("not finished")), "\(out)")
        #expect(out.contains("warn portal        unknown: ") || out.contains("warn portal        not finished"), "\(out)")
        #expect(result.status == 1, "a refused server is a fail: \(out)")
    }

    @Test func withTheProbeOnABlackholedServerFinishesWithinTheBoundAndAKilledDoctorTakesItsHelper() async throws {
        let probe = try OutsideProbeServer()
        let silent = try SilentPort()
        let rig = try await DaemonRig()
        let hang = [probe.v4("hang"), probe.v4("hang?2"), probe.v4("hang?3")]
        let (result, took) = try doctorWithTheProbeOn(rig, server: "https://127.0.0.1:\(silent.port)/", urls: hang)
        #expect(took < Self.bound, "took \(took)")
        let out = result.standardOutput
        #expect(out.contains("server") && out.contains("no answer within 5 s"), "\(out)")
        #expect(out.contains("ccrelay ") && out.contains("journal"), "the rest of the report follows: \(out)")

        // Killed while its helper waits on the network: the helper goes with it.
        let config = rig.configPath + ".probe"
        let doctor = try ChildProcess(DaemonRig.ccrelay, ["doctor", "--config", config], environment: rig.environment)
        // Generous: on a runner loaded with the desktops' tests the doctor took over 10 s to get there (CI).
        #expect(await eventually(timeout: .seconds(40)) { Self.diagnoseHelpers(of: config) > 0 }, "the helper started")
        doctor.stop(signal: SIGKILL)
        _ = doctor.wait()
        #expect(await eventually(timeout: .seconds(10)) { Self.diagnoseHelpers(of: config) == 0 }, "the helper ended with the doctor")
    }

    /// `ccrelay-daemon --diagnose` processes for `config` still running.
    static func diagnoseHelpers(of config: String) -> Int { processes(with: "--diagnose", and: config) }

    /// Processes still running whose command line holds `argument` (and `other`).
    static func processes(with argument: String, and other: String? = nil) -> Int {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.filter { entry in
            guard Int(entry) != nil, let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { return false }
            let words = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            // A zombie has an empty command line: it is over.
            return words.contains(argument) && (other.map(words.contains) ?? true)
        }.count
    }
}
