import CoreVocabulary
import CurlTransport
import CCurl
import EventLoop
#if canImport(Glibc)
import Glibc
import CCRelayCore
#endif

/// The CC/1 exchanges the daemon shell makes, one at a time in the order
/// asked, each answered on the shell's loop: `CCClient` over libcurl, or a
/// scripted server in the shell's unit tests.
public protocol CCTransport: AnyObject {
    func login(device: String, user: String?, password: String?, timeout: Duration?, completion: @escaping (Exchange) -> Void)
    func keepAlive(session: String, seq: UInt64, location: LocationFix?, timeout: Duration?, completion: @escaping (Exchange) -> Void)
    func logout(session: String, timeout: Duration?, completion: @escaping (Exchange) -> Void)
    /// Drops the kept connection in turn; the next request opens a fresh one.
    func dropConnection(completion: @escaping () -> Void)
}

/// The CC/1 client: one reused libcurl easy handle per server in a multi
/// handle on the caller's event loop, so keep-alives travel on one kept-alive
/// TLS connection with a cached TLS session, and the loop never blocks on the
/// network.
///
/// Exchanges run one at a time, in the order they were asked for; their
/// completions run on `loop` (the awaited forms are in CCProtocolAsync, which the daemon does not use).
///
/// Confinement (why `@unchecked Sendable` is sound): every mutable property
/// is used only on `loop`.
public final class CCClient: CCTransport, @unchecked Sendable {
    public let configuration: ServerConfiguration
    public let loop: any EventScheduler
    private let base: ServerURL
    private let client: ClientInfo
    private let userAgent: String
    private var easy: CurlEasy
    private var multi: CurlMulti?
    /// The exchange in flight and what waits behind it.
    private let queue = ExchangeQueue()

    private struct Request {
        var endpoint: ReplyClassifier.Endpoint
        var method: String
        var path: String
        var body: String?
        var token: String?
        var timeout: Duration?
    }

    /// Checks the URL and the credential files, and prepares the handle; runs on `loop` from then on.
    /// (The user heard of a problem from `check` already, in their language: one found here again, the
    /// files changed in between, is said in English, for the log.)
    public init(configuration: ServerConfiguration, client: ClientInfo, loop: any EventScheduler) throws(ClientConfigurationError) {
        self.configuration = configuration
        self.client = client
        self.loop = loop
        base = try ServerURL(parsing: configuration.url, localize: .english)
        userAgent = "ccrelay/\(client.version) (\(client.platform))"
        try Self.check(configuration, localize: .english)
        easy = try Self.makeHandle(configuration, userAgent: userAgent, base: base)
    }

    /// The checks every configuration passes before it is used — by the
    /// daemon at start and by `ccrelay config check`, through this one
    /// function: the credential files (readable regular files, a private
    /// key of the certificate, unencrypted, 0600, not expired), the CA file,
    /// and the interface. Each refusal is said in `localize`'s language.
    public static func check(_ configuration: ServerConfiguration, localize: Localizer) throws(ClientConfigurationError) {
        _ = try ServerURL(parsing: configuration.url, localize: localize)
        if let certificate = configuration.certificate {
            let facts = try CredentialFiles.inspect(
                certificate: certificate, key: configuration.key, passphrase: configuration.keyPassphrase, localize: localize)
            if facts.secondsUntilExpiry < 0 {
                throw ClientConfigurationError(
                    TextTemplate.fill(localize("the client certificate %s expired on %s; get a new one from campus IT"), certificate, facts.notAfterDate),
                    key: "auth.certificate")
            }
        }
        if let caFile = configuration.caFile { try CredentialFiles.checkCertificateAuthorities(caFile, localize: localize) }
        if let interface = configuration.interface, if_nametoindex(interface) == 0 {
            throw ClientConfigurationError(
                TextTemplate.fill(localize("there is no network interface '%s' (ip link lists them); fix [server] interface or remove it"), interface),
                key: "server.interface")
        }
    }

    static func makeHandle(_ configuration: ServerConfiguration, userAgent: String, base: ServerURL) throws(ClientConfigurationError)
        -> CurlEasy
    {
        let easy = CurlEasy()
        // Campus authentication never goes through a proxy, whatever the environment says.
        try easy.setServerTransport(
            scheme: base.scheme, caFile: configuration.caFile, userAgent: userAgent, loopbackOnlyForHTTP: true,
            connectTimeout: configuration.connectTimeout, pinnedKey: configuration.pinnedKey, interface: configuration.interface)
        if let certificate = configuration.certificate {
            try easy.set(CURLOPT_SSLCERT, certificate, "certificate \(certificate)")
            try easy.set(CURLOPT_SSLCERTTYPE, configuration.certificateIsPKCS12 ? "P12" : "PEM", "the certificate type")
            if let key = configuration.key { try easy.set(CURLOPT_SSLKEY, key, "key \(key)") }
            // Always set: without one, OpenSSL would prompt on the terminal for an encrypted key.
            try easy.set(CURLOPT_KEYPASSWD, configuration.keyPassphrase ?? "", "the key passphrase")
        }
        return easy
    }

    // MARK: CC/1

    /// `POST /cc/v1/session` (on `loop`).
    public func login(device: String, user: String? = nil, password: String? = nil, timeout: Duration? = nil,
                      completion: @escaping (Exchange) -> Void) {
        let body = Wire.body(LoginRequest(client: client, device: device, user: user, password: password))
        enqueue(Request(endpoint: .login, method: "POST", path: "cc/v1/session", body: body, token: nil, timeout: timeout), completion)
    }

    /// `POST /cc/v1/session/keepalive` (on `loop`).
    public func keepAlive(session: String, seq: UInt64, location: LocationFix? = nil, timeout: Duration? = nil,
                          completion: @escaping (Exchange) -> Void) {
        let body = Wire.body(KeepAliveRequest(seq: seq, location: location))
        enqueue(
            Request(endpoint: .keepAlive, method: "POST", path: "cc/v1/session/keepalive", body: body, token: session, timeout: timeout),
            completion)
    }

    /// `DELETE /cc/v1/session` (on `loop`).
    public func logout(session: String, timeout: Duration? = nil, completion: @escaping (Exchange) -> Void) {
        enqueue(Request(endpoint: .logout, method: "DELETE", path: "cc/v1/session", body: nil, token: session, timeout: timeout), completion)
    }

    /// Drops the kept connection in turn (on `loop`); the next request opens
    /// a fresh one (after a resume from sleep, or a network change). Then `completion`.
    public func dropConnection(completion: @escaping () -> Void) {
        loop.preconditionIsCurrent("the CC/1 client")
        queue.add { [weak self] in
            self?.replaceHandles()
            completion()
        }
    }

    private func enqueue(_ request: Request, _ completion: @escaping (Exchange) -> Void) {
        loop.preconditionIsCurrent("the CC/1 client")
        queue.add { [weak self] over in
            self?.start(request) { exchange in
                completion(exchange)
                over()
            }
        }
    }

    /// A fresh easy handle and multi handle: the kept connection closes with the old multi handle.
    private func replaceHandles() {
        multi = nil
        // The same configuration was accepted once, so it is accepted again.
        if let fresh = try? Self.makeHandle(configuration, userAgent: userAgent, base: base) { easy = fresh }
    }

    /// One transfer in the multi handle; `completion` runs on the loop when it is over.
    private func start(_ request: Request, completion: @escaping (Exchange) -> Void) {
        let limit = min(request.timeout ?? configuration.requestTimeout, configuration.requestTimeout)
        var headers: UnsafeMutablePointer<curl_slist>?
        for line in ["Accept: application/json", "Expect:", "Content-Type: application/json"]
            + (request.token.map { ["Authorization: CC-Session \($0)"] } ?? [])
        {
            headers = curl_slist_append(headers, line)
        }
        let response = ResponseBuffer(limit: ReplyClassifier.bodyLimit)
        easy.clearError()
        do throws(ClientConfigurationError) {
            try easy.set(CURLOPT_URL, base.base + request.path, "the URL")
            try easy.set(CURLOPT_HTTPHEADER, list: headers, "the headers")
            try easy.set(CURLOPT_TIMEOUT_MS, limit, "the request timeout")
            // Ownership: `response` is retained by the completion below until
            // the transfer is over, the only time curl calls the write function with it.
            try easy.set(CURLOPT_WRITEDATA, pointer: Unmanaged.passUnretained(response).toOpaque(), "the reply buffer")
            try easy.set(CURLOPT_HEADERDATA, pointer: Unmanaged.passUnretained(response).toOpaque(), "the reply buffer")
            if request.method == "POST" {
                try easy.set(CURLOPT_CUSTOMREQUEST, nil, "the method")
                try easy.set(CURLOPT_POST, 1, "POST")
                try easy.set(CURLOPT_COPYPOSTFIELDS, request.body ?? "", "the request body")
            } else {
                try easy.set(CURLOPT_HTTPGET, 1, "the method")
                try easy.set(CURLOPT_CUSTOMREQUEST, request.method, "the method")
            }
        } catch {
            curl_slist_free_all(headers)
            return completion(Exchange(outcome: .transportFailure(.protocolError(error.description)),
                                       httpStatus: 0, connectionsOpened: 0))
        }
        let multi = self.multi ?? CurlMulti(loop: loop)
        self.multi = multi
        let easy = self.easy
        let started = multi.start(easy) { [weak self] code in
            curl_slist_free_all(headers)
            guard let self else { return }
            completion(self.finish(request.endpoint, code: code, easy: easy, response: response))
        }
        if !started {
            curl_slist_free_all(headers)
            completion(Exchange(outcome: .transportFailure(.protocolError("libcurl refused to start the transfer")),
                                httpStatus: 0, connectionsOpened: 0))
        }
    }

    /// What a finished transfer amounts to.
    private func finish(_ endpoint: ReplyClassifier.Endpoint, code: CURLcode, easy: CurlEasy, response: ResponseBuffer) -> Exchange {
        let status = easy.info(CURLINFO_RESPONSE_CODE)
        let opened = easy.info(CURLINFO_NUM_CONNECTS)
        let outcome: Outcome
        if code == CURLE_OK {
            outcome = ReplyClassifier.classify(
                endpoint, status: status, body: response.bytes, retryAfterHeader: response.retryAfter)
        } else {
            outcome = .transportFailure(
                TransportFailure.classify(
                    code, osErrno: easy.info(CURLINFO_OS_ERRNO), bodyOverflowed: response.overflowed,
                    detail: easy.failureText(code)))
            // A broken exchange may leave the connection in any state: start afresh.
            replaceHandles()
        }
        return Exchange(outcome: outcome, httpStatus: status, connectionsOpened: opened)
    }
}
