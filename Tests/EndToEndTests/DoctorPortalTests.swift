import Foundation
import TestSupport
import Testing

/// `ccrelay doctor` on a Srun network (issue 32.6): the `server` lines of a
/// Srun configuration ask the portal's `rad_user_info` (never a login), the
/// `portal` line names the family in front of an anonymous request with a
/// Srun portal's ac_id, version and captcha — also for a CC/1 configuration
/// that cannot log in to it — and a plain-http portal is warned about.
@Suite(.desktopBudget) struct DoctorPortalTests {
    static let user = "2024000001"

    /// A folder with `configuration` written 0600 as ccrelay.conf; removed by the caller.
    static func folder(_ configuration: String) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-doctor-portal-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try configuration.write(toFile: folder + "/ccrelay.conf", atomically: true, encoding: .utf8)
        chmod(folder + "/ccrelay.conf", 0o600)
        return folder
    }

    /// `ccrelay doctor --json` without a bus; the findings, the output and how long it took.
    static func doctor(_ folder: String) throws -> (findings: [[String: Any]], output: String, took: Duration) {
        let clock = ContinuousClock()
        let start = clock.now
        let result = try run(DaemonRig.ccrelay, ["doctor", "--json", "--config", folder + "/ccrelay.conf"], environment: [
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus", "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/bus",
            "XDG_STATE_HOME": folder + "/state",
        ])
        let findings = (try? JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [[String: Any]]) ?? []
        return (findings, result.standardOutput + result.standardError, clock.now - start)
    }

    static func lines(_ findings: [[String: Any]], _ area: String) -> [(verdict: String, text: String, fix: String)] {
        findings.filter { $0["area"] as? String == area }.map {
            ($0["verdict"] as? String ?? "", $0["text"] as? String ?? "", $0["fix"] as? String ?? "")
        }
    }

    /// The portal's request log: paths only.
    static func paths(_ sim: CCSimProcess) throws -> [String] {
        ((try sim.control("GET", "requests")) as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
    }

    @Test func aSrunConfigurationAsksThePortalWithoutALoginAndSaysItsACIDVersionAndCaptcha() throws {
        let sim = try CCSimProcess(tls: false, ["--protocol", "srun", "--ac-id", "5", "--user", "\(Self.user):s3cret pw!"])
        try sim.control("POST", "captcha", ["on": true])
        let folder = try Self.folder("""
            [server]
            protocol = srun
            url = \(sim.url)
            [auth]
            user = \(Self.user)
            [srun]
            ac-id = 3
            [probe]
            mode = off
            """)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (findings, output, took) = try Self.doctor(folder)
        #expect(took < DoctorTests.bound, "took \(took)")
        let server = Self.lines(findings, "server")
        #expect(server.count == 1 && server[0].verdict == "ok", "\(server)")
        #expect(server.first?.text.contains("rad_user_info answered, SRunCGIAuthIntfSvr V1.18") == true
                && server.first?.text.contains("this computer is not online") == true && server.first?.text.contains("TLS") == false,
                "\(server)")
        let portal = Self.lines(findings, "portal")
        #expect(portal.count == 1 && portal[0].verdict == "warn", "\(portal)")
        #expect(portal.first?.text.hasPrefix("Srun (深澜) at http://127.0.x.x:") == true
                && portal.first?.text.contains("(ac_id 5, SRunCGIAuthIntfSvr V1.18 B20210909, captcha on): [srun] ac-id says 3") == true,
                "\(portal)")
        #expect(portal.first?.fix == "set [srun] ac-id = 5 (or auto)", "\(portal)")
        #expect(Self.lines(findings, "configuration").contains { $0.verdict == "warn" && $0.text.contains("the portal is plain http") },
                "the plain-http warning shows: \(Self.lines(findings, "configuration"))")
        #expect(!output.contains(Self.user), "the account never shows")
        let asked = try Self.paths(sim)
        #expect(asked.contains("/cgi-bin/rad_user_info") && asked.contains("/v2/srun_portal_captcha_image_info"), "\(asked)")
        #expect(!asked.contains("/cgi-bin/srun_portal") && !asked.contains("/cgi-bin/get_challenge"), "never a login: \(asked)")
        #expect(try sim.sessions().isEmpty)
    }

    /// With ac-id = auto and no captcha, a portal that answers is all ok.
    @Test func aSrunPortalThatFitsTheConfigurationIsOk() throws {
        let sim = try CCSimProcess(tls: false, ["--protocol", "srun", "--ac-id", "5", "--user", "\(Self.user):pw"])
        try sim.control("POST", "sessions", ["account": Self.user, "ip": "127.0.0.1"])
        let folder = try Self.folder("[server]\nprotocol = srun\nurl = \(sim.url)\n[auth]\nuser = \(Self.user)\n[probe]\nmode = off\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (findings, _, _) = try Self.doctor(folder)
        #expect(Self.lines(findings, "server").first?.text.contains("this computer is online at 127.0.x.x (1 on the account)") == true,
                "\(Self.lines(findings, "server"))")
        let portal = Self.lines(findings, "portal")
        #expect(portal.first?.verdict == "ok" && portal.first?.text.contains("(ac_id 5, SRunCGIAuthIntfSvr V1.18 B20210909, no captcha)") == true,
                "\(portal)")
    }

    /// A CC/1 configuration whose server does not answer, on a network with
    /// a Srun portal in front: the portal is named, with the way to speak it.
    @Test func aCC1ConfigurationOnASrunNetworkIsToldWhatThePortalIs() throws {
        let sim = try CCSimProcess(tls: false, ["--protocol", "srun", "--ac-id", "7", "--user", "\(Self.user):pw"])
        let port = try #require(sim.url.split(separator: ":").last.map { $0.dropLast() })
        let pki = TestPKI.shared
        // The outside probe's URL is an outside host to the simulator (it is not its own address): redirected to the portal.
        let folder = try Self.folder("""
            [server]
            url = https://127.0.0.1:1/
            ca-file = \(pki.caCertificate)
            [auth]
            certificate = \(pki.clientCertificate)
            key = \(pki.clientKey)
            [probe]
            urls = http://[::ffff:127.0.0.1]:\(port)/generate_204
            """)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (findings, _, took) = try Self.doctor(folder)
        #expect(took < DoctorTests.bound, "took \(took)")
        let portal = Self.lines(findings, "portal")
        #expect(portal.first?.verdict == "warn", "\(portal)")
        #expect(portal.first?.text.contains("Srun (深澜) at http://127.0.x.x:\(port)/ (ac_id 7, SRunCGIAuthIntfSvr V1.18 B20210909, captcha not checked): the configuration speaks CC/1") == true,
                "\(portal)")
        #expect(portal.first?.fix == "ccrelay setup --protocol srun --edit", "\(portal)")
        #expect(Self.lines(findings, "server").allSatisfy { $0.text.contains("no connection") }, "the CC/1 check as before")
    }
}
