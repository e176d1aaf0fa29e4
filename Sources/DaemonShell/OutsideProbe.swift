import CCurl
import EventLoop
import CCRelayCore
import CurlTransport

/// Checks outside access when `OutsideAccess` asks: `OutsideProbe` over
/// libcurl, or a scripted one in the shell's unit tests.
public protocol OutsideProbing: AnyObject {
    /// Checks IPv4, then IPv6; `completion` runs on the loop with both verdicts.
    func check(completion: @escaping (OutsideReport) -> Void)
}

/// The daemon's own probe of outside access (`[probe] urls`): plain-HTTP
/// `generate_204` endpoints, one request at a time on the daemon's loop,
/// IPv4 and IPv6 apart, each endpoint given `timeout` (2 s), through the
/// bound interface, never through a proxy, no cookies, no redirect followed,
/// at most 4 KiB of an answer read. The first endpoint that answers an empty
/// 204 (`ok`) or shows a portal decides; failures go on to the next, each
/// one's kind kept. Nothing secret goes out: a probe carries no credential.
///
/// Confinement: used only on `loop`.
public final class OutsideProbe: OutsideProbing {
    private let urls: [String]
    private let interface: String?
    private let userAgent: String
    private let timeout: Duration
    private let loop: any EventScheduler
    private var multi: CurlMulti?
    /// A probe that could not start is answered after `check` returned.
    private lazy var later = LaterOnLoop(loop: loop)

    public init(urls: [String], interface: String?, userAgent: String, timeout: Duration = .seconds(2), loop: any EventScheduler) {
        self.urls = urls
        self.interface = interface
        self.userAgent = userAgent
        self.timeout = timeout
        self.loop = loop
    }

    public func check(completion: @escaping (OutsideReport) -> Void) {
        loop.preconditionIsCurrent("the outside-access probe")
        family(Int(CURL_IPRESOLVE_V4)) { [weak self] ipv4 in
            self?.family(Int(CURL_IPRESOLVE_V6)) { ipv6 in completion(OutsideReport(ipv4: ipv4, ipv6: ipv6)) }
        }
    }

    /// The endpoints in turn over one family, until one decides.
    private func family(_ resolve: Int, from index: Int = 0, answered: [(host: String, answer: ProbeAnswer)] = [],
                        done: @escaping (FamilyCheck) -> Void) {
        guard index < urls.count else { return done(FamilyCheck(answered)) }
        let url = urls[index]
        probe(url, resolve) { [weak self] answer in
            let answers = answered + [(Self.host(url), answer)]
            guard let self, case .failed = answer else { return done(FamilyCheck(answers)) }
            self.family(resolve, from: index + 1, answered: answers, done: done)
        }
    }

    private func probe(_ url: String, _ resolve: Int, completion: @escaping (ProbeAnswer) -> Void) {
        // A fresh handle each time: no connection, cookie or DNS answer is carried from one probe to the next.
        let easy = CurlEasy()
        let response = ResponseBuffer(limit: Self.answerLimit)
        let milliseconds = max(Int(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000), 1)
        do throws(ClientConfigurationError) {
            try easy.set(CURLOPT_URL, url, "the probe URL")
            try easy.set(CURLOPT_USERAGENT, userAgent, "the User-Agent")
            try easy.set(CURLOPT_PROXY, "", "disabling proxies")
            try easy.set(CURLOPT_NOPROXY, "*", "disabling proxies")
            try easy.set(CURLOPT_FOLLOWLOCATION, 0, "refusing redirects")
            try easy.set(CURLOPT_NOSIGNAL, 1, "NOSIGNAL")
            try easy.set(CURLOPT_IPRESOLVE, resolve, "the address family")
            try easy.set(CURLOPT_CONNECTTIMEOUT_MS, milliseconds, "the connect timeout")
            try easy.set(CURLOPT_TIMEOUT_MS, milliseconds, "the probe timeout")
            try easy.set(CURLOPT_DNS_CACHE_TIMEOUT, 0, "no DNS cache")
            if let interface { try easy.set(CURLOPT_INTERFACE, "if!" + interface, "interface \(interface)") }
            guard ccurl_setopt_only_protocol(easy.handle, "http") == CURLE_OK else { throw ClientConfigurationError("plain http only") }
            _ = ccurl_setopt_write_function(easy.handle, appendToResponseBuffer)
            _ = ccurl_setopt_header_function(easy.handle, takeResponseHeader)
            // Ownership: `response` is kept by the completion below until the transfer is over.
            try easy.set(CURLOPT_WRITEDATA, pointer: Unmanaged.passUnretained(response).toOpaque(), "the answer buffer")
            try easy.set(CURLOPT_HEADERDATA, pointer: Unmanaged.passUnretained(response).toOpaque(), "the answer buffer")
        } catch {
            return later.run { completion(.failed("transport")) }
        }
        let multi = self.multi ?? CurlMulti(loop: loop)
        self.multi = multi
        let started = multi.start(easy) { code in
            withExtendedLifetime(easy) {}
            if response.headComplete || code == CURLE_OK {
                let status = response.headComplete ? response.status : easy.info(CURLINFO_RESPONSE_CODE)
                completion(ProbeAnswer.classify(status: status, bodyBytes: max(response.bytes.count, response.contentLength ?? 0)))
            } else {
                completion(.failed(Self.kind(code)))
            }
        }
        if !started { later.run { completion(.failed("transport")) } }
    }


    /// The most of an answer that is read (a portal's page needs no more to be one).
    static let answerLimit = 4096

    /// The kind of a transfer's failure, as `status` and the alert say it.
    static func kind(_ code: CURLcode) -> String {
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST: "dns"
        case CURLE_OPERATION_TIMEDOUT: "timeout"
        case CURLE_COULDNT_CONNECT: "connect"
        case CURLE_INTERFACE_FAILED: "interface"
        case CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR: "reset"
        default: "transport (curl \(code.rawValue))"
        }
    }

    /// The host of a probe URL, for its answer's line.
    static func host(_ url: String) -> String {
        let rest = url.dropFirst("http://".count)
        return String(rest.prefix { $0 != "/" && $0 != "?" })
    }
}
