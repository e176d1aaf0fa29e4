import CCurl
import Dispatch
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The CC/1 client: one reused libcurl easy handle per server, so keep-alives
/// travel on one kept-alive TLS connection with a cached TLS session.
///
/// Requests run on the client's own serial queue (libcurl's easy interface
/// blocks), so the daemon's event loop never waits on the network; the async
/// methods return when the exchange is over.
///
/// Confinement (why `@unchecked Sendable` is sound): `easy` (the handle)
/// is touched only on `queue`.
public final class CCClient: @unchecked Sendable {
    public let configuration: ServerConfiguration
    private let base: ServerURL
    private let client: ClientInfo
    private let userAgent: String
    private let queue = DispatchQueue(label: "ccrelay.cc-client")
    private var easy: CurlEasy

    /// Checks the URL and the credential files, and prepares the handle.
    public init(configuration: ServerConfiguration, client: ClientInfo) throws(ClientConfigurationError) {
        self.configuration = configuration
        self.client = client
        base = try ServerURL(parsing: configuration.url)
        userAgent = "ccrelay/\(client.version) (\(client.platform))"
        try Self.check(configuration)
        easy = try Self.makeHandle(configuration, userAgent: userAgent, base: base)
    }

    /// The checks every configuration passes before it is used — by the
    /// daemon at start and by `ccrelay config check`, through this one
    /// function: the credential files (readable regular files, a private
    /// key of the certificate, unencrypted, 0600, not expired), the CA file,
    /// and the interface.
    public static func check(_ configuration: ServerConfiguration) throws(ClientConfigurationError) {
        _ = try ServerURL(parsing: configuration.url)
        if let certificate = configuration.certificate {
            let facts = try CredentialFiles.inspect(
                certificate: certificate, key: configuration.key, passphrase: configuration.keyPassphrase)
            if facts.secondsUntilExpiry < 0 {
                throw ClientConfigurationError(
                    "the client certificate \(certificate) expired on \(facts.notAfterDate); get a new one from campus IT",
                    key: "auth.certificate")
            }
        }
        if let caFile = configuration.caFile { try CredentialFiles.checkCertificateAuthorities(caFile) }
        if let interface = configuration.interface, if_nametoindex(interface) == 0 {
            throw ClientConfigurationError(
                "there is no network interface '\(interface)' (ip link lists them); fix [server] interface or remove it",
                key: "server.interface")
        }
    }

    private static func makeHandle(_ configuration: ServerConfiguration, userAgent: String, base: ServerURL) throws(ClientConfigurationError)
        -> CurlEasy
    {
        let easy = CurlEasy()
        try easy.set(CURLOPT_USERAGENT, userAgent, "the User-Agent")
        // Campus authentication never goes through a proxy, whatever the environment says.
        try easy.set(CURLOPT_PROXY, "", "disabling proxies")
        try easy.set(CURLOPT_NOPROXY, "*", "disabling proxies")
        try easy.set(CURLOPT_FOLLOWLOCATION, 0, "refusing redirects")
        try easy.set(CURLOPT_NOSIGNAL, 1, "NOSIGNAL")
        try easy.set(CURLOPT_PROTOCOLS_STR, base.scheme, "the protocol")
        try easy.set(CURLOPT_SSL_VERIFYPEER, 1, "server certificate verification")
        try easy.set(CURLOPT_SSL_VERIFYHOST, 2, "server name verification")
        try easy.set(CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_2), "TLS 1.2 or newer")
        try easy.set(CURLOPT_TCP_KEEPALIVE, 1, "TCP keep-alive")
        // No cached names: a new connection (rare: one is kept) resolves
        // afresh, so a network change never reuses another network's answer.
        try easy.set(CURLOPT_DNS_CACHE_TIMEOUT, 0, "no DNS cache")
        try easy.set(CURLOPT_CONNECTTIMEOUT_MS, milliseconds(configuration.connectTimeout), "the connect timeout")
        if let caFile = configuration.caFile { try easy.set(CURLOPT_CAINFO, caFile, "ca-file \(caFile)") }
        if let pin = configuration.pinnedKey { try easy.set(CURLOPT_PINNEDPUBLICKEY, pin, "pinned-key") }
        if let interface = configuration.interface {
            try easy.set(CURLOPT_INTERFACE, "if!" + interface, "interface \(interface)")
        }
        if let certificate = configuration.certificate {
            try easy.set(CURLOPT_SSLCERT, certificate, "certificate \(certificate)")
            try easy.set(CURLOPT_SSLCERTTYPE, configuration.certificateIsPKCS12 ? "P12" : "PEM", "the certificate type")
            if let key = configuration.key { try easy.set(CURLOPT_SSLKEY, key, "key \(key)") }
            // Always set: without one, OpenSSL would prompt on the terminal for an encrypted key.
            try easy.set(CURLOPT_KEYPASSWD, configuration.keyPassphrase ?? "", "the key passphrase")
        }
        _ = ccurl_setopt_write_function(easy.handle, appendBody)
        return easy
    }

    private static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds) * 1000 + Int(duration.components.attoseconds / 1_000_000_000_000_000)
    }

    // MARK: CC/1

    /// `POST /cc/v1/session`. Exchanges run one at a time on the client's
    /// serial queue, in the order they were asked for; `completion` runs there.
    public func login(device: String, user: String? = nil, password: String? = nil, timeout: Duration? = nil,
                      completion: @escaping @Sendable (Exchange) -> Void) {
        let body = encode(LoginRequest(client: client, device: device, user: user, password: password))
        run(.login, method: "POST", path: "cc/v1/session", body: body, token: nil, timeout: timeout, completion)
    }

    /// `POST /cc/v1/session/keepalive`.
    public func keepAlive(session: String, seq: UInt64, location: LocationFix? = nil, timeout: Duration? = nil,
                          completion: @escaping @Sendable (Exchange) -> Void) {
        let body = encode(KeepAliveRequest(seq: seq, location: location))
        run(.keepAlive, method: "POST", path: "cc/v1/session/keepalive", body: body, token: session, timeout: timeout, completion)
    }

    /// `DELETE /cc/v1/session`.
    public func logout(session: String, timeout: Duration? = nil, completion: @escaping @Sendable (Exchange) -> Void) {
        run(.logout, method: "DELETE", path: "cc/v1/session", body: nil, token: session, timeout: timeout, completion)
    }

    /// Drops the kept connection in turn; the next request opens a fresh one
    /// (after a resume from sleep, or a network change). Then `completion`.
    public func dropConnection(completion: @escaping @Sendable () -> Void) {
        queue.async {
            self.replaceHandle()
            completion()
        }
    }

    // The same, awaited.

    public func login(device: String, user: String? = nil, password: String? = nil, timeout: Duration? = nil) async
        -> Exchange
    {
        await withCheckedContinuation { continuation in
            login(device: device, user: user, password: password, timeout: timeout) { continuation.resume(returning: $0) }
        }
    }

    public func keepAlive(session: String, seq: UInt64, location: LocationFix? = nil, timeout: Duration? = nil) async
        -> Exchange
    {
        await withCheckedContinuation { continuation in
            keepAlive(session: session, seq: seq, location: location, timeout: timeout) { continuation.resume(returning: $0) }
        }
    }

    public func logout(session: String, timeout: Duration? = nil) async -> Exchange {
        await withCheckedContinuation { continuation in
            logout(session: session, timeout: timeout) { continuation.resume(returning: $0) }
        }
    }

    public func dropConnection() async {
        await withCheckedContinuation { continuation in dropConnection { continuation.resume() } }
    }

    private func run(
        _ endpoint: ReplyClassifier.Endpoint, method: String, path: String, body: String?, token: String?,
        timeout: Duration?, _ completion: @escaping @Sendable (Exchange) -> Void
    ) {
        queue.async {
            completion(self.perform(endpoint, method: method, path: path, body: body, token: token, timeout: timeout))
        }
    }

    private func replaceHandle() {
        // The same configuration was accepted once, so it is accepted again.
        if let fresh = try? Self.makeHandle(configuration, userAgent: userAgent, base: base) { easy = fresh }
    }

    private func encode<T: Encodable>(_ value: T) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// One blocking transfer on `queue`.
    private func perform(
        _ endpoint: ReplyClassifier.Endpoint, method: String, path: String, body: String?, token: String?,
        timeout: Duration?
    ) -> Exchange {
        let limit = min(timeout ?? configuration.requestTimeout, configuration.requestTimeout)
        var headers: UnsafeMutablePointer<curl_slist>?
        for line in ["Accept: application/json", "Expect:", "Content-Type: application/json"]
            + (token.map { ["Authorization: CC-Session \($0)"] } ?? [])
        {
            headers = curl_slist_append(headers, line)
        }
        defer { curl_slist_free_all(headers) }
        let response = ResponseBuffer(limit: ReplyClassifier.bodyLimit)
        let context = Unmanaged.passUnretained(response).toOpaque()
        let handle = easy.handle
        easy.clearError()
        var setupOK = true
        setupOK = setupOK && ccurl_setopt_string(handle, CURLOPT_URL, base.base + path) == CURLE_OK
        setupOK = setupOK && ccurl_setopt_slist(handle, CURLOPT_HTTPHEADER, headers) == CURLE_OK
        setupOK = setupOK && ccurl_setopt_long(handle, CURLOPT_TIMEOUT_MS, max(Self.milliseconds(limit), 1)) == CURLE_OK
        // Ownership: `response` outlives curl_easy_perform, the only time curl
        // calls the write function with this pointer.
        setupOK = setupOK && ccurl_setopt_pointer(handle, CURLOPT_WRITEDATA, context) == CURLE_OK
        if method == "POST" {
            setupOK = setupOK && ccurl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, nil) == CURLE_OK
            setupOK = setupOK && ccurl_setopt_long(handle, CURLOPT_POST, 1) == CURLE_OK
            setupOK = setupOK && ccurl_setopt_string(handle, CURLOPT_COPYPOSTFIELDS, body ?? "") == CURLE_OK
        } else {
            setupOK = setupOK && ccurl_setopt_long(handle, CURLOPT_HTTPGET, 1) == CURLE_OK
            setupOK = setupOK && ccurl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method) == CURLE_OK
        }
        guard setupOK else {
            return Exchange(outcome: .transportFailure(.protocolError("libcurl refused the request options")),
                            httpStatus: 0, curlCode: -1, connectionsOpened: 0)
        }
        let code = curl_easy_perform(handle)
        let status = easy.info(CURLINFO_RESPONSE_CODE)
        let opened = easy.info(CURLINFO_NUM_CONNECTS)
        let outcome: Outcome
        if code == CURLE_OK {
            outcome = ReplyClassifier.classify(
                endpoint, status: status, body: response.bytes, retryAfterHeader: easy.header("Retry-After"))
        } else {
            outcome = .transportFailure(
                ReplyClassifier.transportFailure(
                    code, osErrno: easy.info(CURLINFO_OS_ERRNO), bodyOverflowed: response.overflowed,
                    detail: easy.failureText(code)))
            // A broken exchange may leave the connection in any state: start afresh.
            replaceHandle()
        }
        return Exchange(outcome: outcome, httpStatus: status, curlCode: Int(code.rawValue), connectionsOpened: opened)
    }
}

/// Collects a reply body up to a limit.
final class ResponseBuffer {
    let limit: Int
    var bytes: [UInt8] = []
    var overflowed = false
    init(limit: Int) { self.limit = limit }
}

/// libcurl's write function: appends to the `ResponseBuffer` in the write
/// data, and stops the transfer (returns 0) once the reply exceeds its limit.
private let appendBody: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
    data, size, count, context in
    guard let data, let context else { return 0 }
    let buffer = Unmanaged<ResponseBuffer>.fromOpaque(context).takeUnretainedValue()
    let total = size * count
    guard buffer.bytes.count + total <= buffer.limit else {
        buffer.overflowed = true
        return 0
    }
    data.withMemoryRebound(to: UInt8.self, capacity: total) { buffer.bytes.append(contentsOf: UnsafeBufferPointer(start: $0, count: total)) }
    return total
}
