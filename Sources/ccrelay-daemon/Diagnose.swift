import CCProtocol
import CurlTransport
import DaemonShell
import DesktopServices
import EventLoop
import CCRelayCore
import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// `ccrelay doctor`'s network lines, from the process that has libcurl
/// (`ccrelay-daemon --diagnose --config PATH`): libcurl's version, the
/// certificate's expiry and key, the CC server over IPv4 and IPv6 (name,
/// TCP, TLS with the server's chain and the client certificate — a `GET`
/// of the base URL, never a login, so a live session is left alone) or a
/// Srun portal (its `rad_user_info`), the portal in front of an anonymous
/// request (DiagnosePortal.swift) and the outside probe's matrix. One
/// finding a line on standard output, `AREA<TAB>ok|warn|fail<TAB>TEXT<TAB>FIX`,
/// written the moment it is known (the server's, the portal's, then the
/// probe's); the doctor takes the identifiers out.
///
/// Bounded whatever the network does: 5 s for the server (8 s for a Srun
/// portal), 6 s an URL for the portal and 4 s each question to a Srun one,
/// the probe's 2 s an endpoint (at most 3 a family), all at once, and `deadline` for all of
/// it — what has not answered by then is a line that says so. It ends with
/// the doctor that started it (the parent-death signal).
enum Diagnose {
    /// The longest the network lines take, everything included.
    static let deadline = Duration.seconds(15)

    static func run(_ path: String) -> Never {
        // A doctor that is killed (or gives up) takes its helper with it.
        _ = ccrelay_die_with_parent(SIGKILL)
        if getppid() == 1 { exit(0) }
        say("libraries", "ok", CurlEasy.version)
        let loaded = ConfigurationCheck.load(path)
        guard let configuration = loaded.configuration else {
            say("server", "warn", "not checked: the configuration cannot be used (see the configuration lines)")
            exit(0)
        }
        certificate(configuration)
        let loop: EventLoop
        do {
            loop = try EventLoop()
        } catch {
            say("server", "fail", "cannot check: \(error)")
            exit(0)
        }
        var lines = Lines(configuration: configuration)
        let userAgent = "ccrelay/\(ccrelayVersion)"
        switch configuration.serverProtocol {
        case .cc1:
            do throws(ClientConfigurationError) {
                try ServerReach.check(ConfigurationCheck.serverConfiguration(configuration), userAgent: userAgent, loop: loop) { reaches in
                    lines.server = server(configuration, reaches)
                    lines.serverReached = reaches.contains { $0.status != nil }
                    lines.flush()
                }
            } catch {
                lines.server = [line("server", "fail", error.message)]
                lines.serverReached = false
                lines.flush()
            }
        case .srun:
            srunServer(configuration, userAgent: userAgent, loop: loop) { found in
                lines.server = found
                lines.flush()
            }
        }
        survey(configuration, userAgent: userAgent, loop: loop) { outcome in
            lines.survey = outcome
            lines.flush()
        }
        // Held until the loop ends: the probe's completion does not keep it.
        let probe = configuration.probeEnabled
            ? OutsideProbe(urls: configuration.probeURLs, interface: configuration.interface, userAgent: userAgent, loop: loop) : nil
        if let probe {
            probe.check { report in
                lines.outside = [("IPv4", report.ipv4), ("IPv6", report.ipv6)].map { family, check in
                    line("outside", check.verdict == .ok ? "ok" : "warn", "\(family) \(check.verdict.rawValue): \(check.answers.joined(separator: "; "))",
                         fix: check.verdict == .portal ? "open any web page in a browser and log in to the portal it shows" : nil)
                }
                lines.flush()
            }
        } else {
            lines.outside = [line("outside", "ok", "not checked ([probe] mode = off)")]
            lines.flush()
        }
        let timer = loop.makeTimer {
            let seconds = deadline.components.seconds
            if lines.server == nil {
                lines.server = [line("server", "warn", "not finished: no answer within \(seconds) s",
                                     fix: "check the network (ip route), [server] url and [server] interface")]
            }
            if lines.outside == nil { lines.outside = [line("outside", "warn", "not finished: no verdict within \(seconds) s")] }
            lines.serverReached = lines.serverReached ?? false
            if lines.survey == nil { lines.portal = [line("portal", "warn", "not finished: no answer within \(seconds) s")] }
            lines.flush()
        }
        timer.arm(after: deadline)
        withExtendedLifetime((probe, timer)) { loop.run() }
        exit(0)
    }

    /// The server's lines, the portal's and the probe's, each written as
    /// soon as it is known and those before it are out; the process ends
    /// once all are. The portal's line is made once the survey is over and
    /// (CC/1: whether its server answers says "CC/1") the server's check.
    struct Lines {
        let configuration: Configuration
        var server: [String]?
        var portal: [String]?
        var outside: [String]?
        var serverReached: Bool?
        var survey: PortalSurvey.Outcome?
        private var written = 0

        init(configuration: Configuration) {
            self.configuration = configuration
        }

        mutating func flush() {
            if portal == nil, let survey, configuration.serverProtocol == .srun || serverReached != nil {
                portal = [Diagnose.portal(configuration, survey, serverReached: serverReached ?? false)]
            }
            let areas = [server, portal, outside]
            while written < areas.count, let lines = areas[written] {
                for line in lines { write(line) }
                written += 1
            }
            if written == areas.count { exit(0) }
        }

        private func write(_ line: String) { _ = line.withCString { Glibc.write(1, $0, strlen($0)) } }
    }

    static func say(_ area: String, _ verdict: String, _ text: String, fix: String? = nil) {
        _ = line(area, verdict, text, fix: fix).withCString { write(1, $0, strlen($0)) }
    }

    static func line(_ area: String, _ verdict: String, _ text: String, fix: String? = nil) -> String {
        let clean = { (text: String) in String(text.map { $0 == "\t" || $0 == "\n" || $0 == "\r" ? " " : $0 }) }
        return [area, verdict, clean(text), clean(fix ?? "")].joined(separator: "\t") + "\n"
    }

    /// The certificate's expiry, and whether its key belongs to it (the subject names the student: left out).
    private static func certificate(_ configuration: Configuration) {
        guard let certificate = configuration.certificate else {
            return say("certificate", "ok", "none (a password login)")
        }
        do throws(ClientConfigurationError) {
            let facts = try CredentialFiles.inspect(certificate: certificate, key: configuration.key, passphrase: configuration.bundlePassword,
                                                    localize: .english)
            let days = facts.daysUntilExpiry
            say("certificate", days < 0 ? "fail" : days < 14 ? "warn" : "ok",
                "expires \(facts.notAfterDate) (\(days) days); the private key belongs to it",
                fix: days < 14 ? "ask campus IT for a new certificate, then: ccrelay setup" : nil)
        } catch {
            say("certificate", "fail", error.message, fix: "ccrelay setup")
        }
    }

    /// One line a family: the server's name resolved, the connection and the
    /// TLS handshake. A family that fails while the other works is a warning.
    private static func server(_ configuration: Configuration, _ reaches: [ServerReach]) -> [String] {
        // A family with no way to the server while the other has one is a
        // warning (many campuses have no IPv6); a refused handshake never is.
        let reached = reaches.contains { $0.status != nil }
        let connected = reaches.contains { $0.address != nil }
        let tls = configuration.serverURL.lowercased().hasPrefix("https:")
        return reaches.map { reach in
            let address = reach.address ?? "no address"
            if let status = reach.status {
                let what = tls
                    ? "name, TCP and TLS ok (the server's certificate verified"
                        + (configuration.certificate == nil ? ")" : ", the client certificate taken)")
                    : "name and TCP ok (plain HTTP, loopback only)"
                return line("server", "ok", "\(reach.family) \(address): \(what); HTTP \(status) to GET /")
            }
            let failure = reach.failure ?? .protocolError("no answer")
            let expected: Bool
            let text: String
            switch failure {
            case .noNetwork(let detail), .connectionLost(let detail):
                expected = reached || connected && reach.address == nil
                text = "no connection [\(detail)]"
            case .timeout:
                expected = reached
                text = "no answer within 5 s"
            default:
                expected = false
                text = failure.problem.sentence
            }
            return line("server", expected ? "warn" : "fail", "\(reach.family) \(address): \(text)", fix: expected ? nil : fix(failure))
        }
    }

    static func fix(_ failure: TransportFailure) -> String {
        switch failure {
        case .noNetwork, .connectionLost, .timeout: "check the network (ip route), [server] url and [server] interface"
        case .serverUntrusted: "log in to a captive portal in a browser; otherwise check [server] ca-file and pinned-key"
        case .clientCertificateRefused, .credentialFilesUnusable: "ask campus IT whether the certificate is valid, then: ccrelay setup"
        case .replyTooLarge, .protocolError: "check [server] url (https:// and the campus server's name)"
        }
    }
}
