import CCRelayCore
import CurlTransport
import EventLoop
import SrunProtocol

/// What an anonymous request shows of the portal in front of this network:
/// `ccrelay setup`'s offer (`ccrelay-daemon --discover`) and `ccrelay
/// doctor`'s `portal` line. Every text in it comes checked from
/// `PortalTrail` and `SrunClient`: URLs printable ASCII without spaces, the
/// access controller digits, addresses valid, the version cleaned.
public struct PortalFacts: Sendable, Hashable {
    public var family: PortalFamily
    /// The URL that was asked.
    public var from: String
    /// Where the trail ended, as `scheme://host[:port]/` (what the family was read from).
    public var landing: String?
    /// A Srun portal's base URL.
    public var portal: String?
    /// `ac_id`, from the redirect or the page.
    public var acID: String?
    /// The address the portal sees this computer at.
    public var clientIP: String?
    /// A Srun portal's `srun_ver`, from its `rad_user_info` (nil: it did not say, or did not answer).
    public var serverVersion: String?
    /// Whether a Srun portal has a session at this address (nil: not asked, or no answer).
    public var online: Bool?
    /// Whether a Srun portal wants a picture captcha (nil: not asked — no user to ask for —, or no answer).
    public var captcha: Bool?

    public init(family: PortalFamily, from: String) {
        self.family = family
        self.from = from
    }
}

/// Finds the portal from plain-http URLs (the outside probe's, by default):
/// each URL in turn until one answers, the redirects followed by hand
/// (`SrunClient.discover`); for a Srun portal then its `rad_user_info` and,
/// with a user, its captcha check — never a login. Bounded by `budget` in all.
public enum PortalSurvey {
    /// What the survey came to.
    public enum Outcome: Sendable, Hashable {
        case found(PortalFacts)
        /// No URL answered: the last one asked, and why, in a few words.
        case unreachable(from: String, why: String)
    }

    /// The most one URL's trail may take, and each question to a Srun portal after it.
    static let perURL = Duration.seconds(6)
    static let perQuestion = Duration.seconds(4)

    /// Runs the survey on `loop`; `done` runs there once, within `budget`.
    public static func run(urls: [String], interface: String?, caFile: String?, user: String?, domain: String = "", budget: Duration,
                           userAgent: String, loop: any EventScheduler, done: @escaping (Outcome) -> Void) {
        let survey = Survey(interface: interface, caFile: caFile, user: user, domain: domain, deadline: loop.now + budget,
                            userAgent: userAgent, loop: loop, done: done)
        survey.next(urls)
    }

    /// A transport failure in a few words, libcurl's own last, for one line of a report.
    public static func words(_ failure: TransportFailure) -> String {
        switch failure {
        case .noNetwork(let detail): "no network [\(detail)]"
        case .connectionLost(let detail): "no connection [\(detail)]"
        case .timeout: "no answer in time"
        case .serverUntrusted(_, let detail): "the server's certificate could not be verified [\(detail)]"
        case .clientCertificateRefused(_, let detail), .credentialFilesUnusable(let detail): "TLS refused [\(detail)]"
        case .replyTooLarge: "an answer over 64 KiB"
        case .protocolError(let detail): "an answer not understood (\(detail))"
        }
    }

    /// One survey: the clients it asks through are kept by the completions
    /// waiting on them, and let go when `done` has run.
    ///
    /// Confinement: used only on `loop`.
    private final class Survey {
        let interface: String?
        let caFile: String?
        let user: String?
        let domain: String
        let deadline: Duration
        let userAgent: String
        let loop: any EventScheduler
        var done: ((Outcome) -> Void)?

        init(interface: String?, caFile: String?, user: String?, domain: String, deadline: Duration, userAgent: String,
             loop: any EventScheduler, done: @escaping (Outcome) -> Void) {
            self.interface = interface
            self.caFile = caFile
            self.user = user
            self.domain = domain
            self.deadline = deadline
            self.userAgent = userAgent
            self.loop = loop
            self.done = done
        }

        /// What is left of the budget, at most `limit`.
        func time(_ limit: Duration) -> Duration { min(limit, deadline - loop.now) }

        func finish(_ outcome: Outcome) {
            let done = self.done
            self.done = nil
            done?(outcome)
        }

        /// A client for `portal`: discovery fetches with handles of its own,
        /// so the finder's portal is only what its configuration must name.
        func client(portal: String, acID: String) throws(ClientConfigurationError) -> SrunClient {
            try SrunClient(
                configuration: SrunConfiguration(portal: portal, acID: acID, domain: domain, caFile: caFile, interface: interface),
                userAgent: userAgent, loop: loop)
        }

        /// Asks the first of `urls`; the next when it does not answer.
        func next(_ urls: [String], lastFailure: (String, String)? = nil) {
            guard let url = urls.first, time(PortalSurvey.perURL) > .zero else {
                let (from, why) = lastFailure ?? (urls.first ?? "", urls.isEmpty ? "no URL to ask" : "no answer in time")
                return finish(.unreachable(from: from, why: why))
            }
            let rest = Array(urls.dropFirst())
            do {
                let finder = try client(portal: "http://127.0.0.1/", acID: "1")
                try finder.discover(from: url, timeout: time(PortalSurvey.perURL)) { exchange in
                    withExtendedLifetime(finder) {}
                    switch exchange.outcome {
                    case .failed(let failure): self.next(rest, lastFailure: (url, PortalSurvey.words(failure)))
                    case .answered(let found): self.found(found, from: url)
                    }
                }
            } catch let error as ClientConfigurationError {
                finish(.unreachable(from: url, why: error.message))
            } catch {
                next(rest, lastFailure: (url, "\(error)"))
            }
        }

        func found(_ discovery: PortalDiscovery, from url: String) {
            var facts = PortalFacts(family: discovery.family, from: url)
            facts.landing = discovery.trail.last.map(Self.origin)
            facts.portal = discovery.portal
            facts.acID = discovery.acID
            facts.clientIP = discovery.clientIP
            guard discovery.family == .srun, let portal = discovery.portal, let srun = try? client(portal: portal, acID: discovery.acID ?? "1")
            else { return finish(.found(facts)) }
            srun.portalStatus(timeout: time(PortalSurvey.perQuestion)) { exchange in
                if case .answered(let status) = exchange.outcome {
                    facts.serverVersion = status.serverVersion
                    switch status.userInfo {
                    case .online(let account):
                        facts.online = true
                        facts.clientIP = account.onlineIP ?? facts.clientIP
                    case .offline(let clientIP):
                        facts.online = false
                        facts.clientIP = clientIP ?? facts.clientIP
                    }
                }
                self.captcha(srun, facts)
            }
        }

        /// The captcha check names a user: asked only with one.
        func captcha(_ srun: SrunClient, _ facts: PortalFacts) {
            let left = time(PortalSurvey.perQuestion)
            guard let user, left > .zero else { return finish(.found(facts)) }
            do {
                try srun.captchaRequired(user: user, timeout: left) { exchange in
                    var facts = facts
                    if case .answered(let required) = exchange.outcome { facts.captcha = required }
                    withExtendedLifetime(srun) { self.finish(.found(facts)) }
                }
            } catch {
                finish(.found(facts))
            }
        }

        /// `scheme://host[:port]/` of a URL `PortalTrail` checked (printable ASCII, no spaces).
        static func origin(_ url: String) -> String {
            guard let scheme = url.firstRange(of: "://") else { return url }
            let host = url[scheme.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            return String(url[..<host.endIndex]) + "/"
        }
    }
}
