import CCurl
import CurlTransport
import EventLoop
import CCRelayCore

/// How the CC server is reached over one address family, found without a
/// CC/1 request (nothing logs in, nothing is logged out): whether its name
/// resolves, a TCP connection opens, and the TLS handshake holds — the
/// server's chain verified and the client certificate taken — with the
/// daemon's own transport settings. For `ccrelay doctor`.
public struct ServerReach: Sendable, Hashable {
    /// `IPv4` or `IPv6`.
    public var family: String
    /// The address connected to, when one was.
    public var address: String?
    /// The HTTP status of the answer to `GET` the base URL, when one came (any status: the way there works).
    public var status: Int?
    /// Why the server was not reached, when it was not.
    public var failure: TransportFailure?

    /// Asks the server at `configuration` over IPv4 and IPv6 at once (each
    /// at most `timeout`), on `loop`; `completion` gets both, IPv4 first.
    public static func check(_ configuration: ServerConfiguration, userAgent: String, timeout: Duration = .seconds(5),
                             loop: any EventScheduler, completion: @escaping ([ServerReach]) -> Void) throws(ClientConfigurationError) {
        let base = try ServerURL(parsing: configuration.url, localize: .english)
        let multi = CurlMulti(loop: loop)
        var answers: [String: ServerReach] = [:]
        for (family, resolve) in [("IPv4", CURL_IPRESOLVE_V4), ("IPv6", CURL_IPRESOLVE_V6)] {
            let easy = try CCClient.makeHandle(configuration, userAgent: userAgent, base: base)
            let response = ResponseBuffer(limit: 64 * 1024)
            try easy.set(CURLOPT_URL, base.base, "the URL")
            try easy.set(CURLOPT_IPRESOLVE, Int(resolve), "the address family")
            try easy.set(CURLOPT_HTTPGET, 1, "the method")
            try easy.set(CURLOPT_TIMEOUT_MS, Int(timeout.components.seconds) * 1000, "the timeout")
            try easy.set(CURLOPT_WRITEDATA, pointer: Unmanaged.passUnretained(response).toOpaque(), "the reply buffer")
            try easy.set(CURLOPT_HEADERDATA, pointer: Unmanaged.passUnretained(response).toOpaque(), "the reply buffer")
            easy.clearError()
            let started = multi.start(easy) { code in
                // `easy` and `response` live until the transfer is over, here.
                var reach = ServerReach(family: family, address: easy.primaryAddress)
                if code == CURLE_OK {
                    reach.status = easy.info(CURLINFO_RESPONSE_CODE)
                } else {
                    reach.failure = TransportFailure.classify(
                        code, osErrno: easy.info(CURLINFO_OS_ERRNO), bodyOverflowed: response.overflowed, detail: easy.failureText(code))
                }
                answers[family] = reach
                if answers.count == 2 {
                    withExtendedLifetime(multi) { completion([answers["IPv4"], answers["IPv6"]].compactMap { $0 }) }
                }
            }
            if !started {
                answers[family] = ServerReach(family: family, failure: .protocolError("libcurl refused to start the transfer"))
            }
        }
        if answers.count == 2 { completion([answers["IPv4"], answers["IPv6"]].compactMap { $0 }) }
    }

    public init(family: String, address: String? = nil, status: Int? = nil, failure: TransportFailure? = nil) {
        self.family = family
        self.address = address
        self.status = status
        self.failure = failure
    }
}
