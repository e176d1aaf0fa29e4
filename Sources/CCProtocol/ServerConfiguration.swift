import CurlTransport
import CCurl
import CCRelayCore
import CoreVocabulary

/// Where and how to reach the CC server: the `[server]` and `[auth]` facts
/// of the configuration that the client needs.
public struct ServerConfiguration: Sendable, Hashable {
    /// Base URL such as `https://cc.campus.example/`.
    public var url: String
    /// A campus CA file; nil means the system trust store.
    public var caFile: String?
    /// `sha256//BASE64=` public-key pin, checked on top of the CA.
    public var pinnedKey: String?
    /// Bind the requests to this network interface.
    public var interface: String?
    /// Client certificate: PEM (may hold the key) or PKCS#12 (`.p12`/`.pfx`).
    public var certificate: String?
    /// PEM private key, when not inside `certificate`.
    public var key: String?
    /// Passphrase of the key or of the PKCS#12 bundle.
    public var keyPassphrase: String?
    /// Time to set up a connection.
    public var connectTimeout: Duration
    /// Longest time one request may take (the caller may ask for less).
    public var requestTimeout: Duration

    public init(url: String, caFile: String? = nil, pinnedKey: String? = nil, interface: String? = nil,
                certificate: String? = nil, key: String? = nil, keyPassphrase: String? = nil,
                connectTimeout: Duration = .seconds(5), requestTimeout: Duration = .seconds(15)) {
        self.url = url
        self.caFile = caFile
        self.pinnedKey = pinnedKey
        self.interface = interface
        self.certificate = certificate
        self.key = key
        self.keyPassphrase = keyPassphrase
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
    }

    /// True when the certificate is a PKCS#12 bundle (by its file name).
    var certificateIsPKCS12: Bool {
        certificate.map { Configuration.isPKCS12Bundle($0) } ?? false
    }
}

/// The parts of the server URL the client checks.
struct ServerURL {
    var scheme: String
    var host: String
    /// The base with exactly one trailing slash.
    var base: String

    /// Parses with libcurl's own URL parser; plain http only to loopback. A
    /// refusal is said in `localize`'s language.
    init(parsing text: String, localize: Localizer) throws(ClientConfigurationError) {
        guard let handle = curl_url() else { throw ClientConfigurationError.url(localize("out of memory parsing the server URL")) }
        defer { curl_url_cleanup(handle) }
        guard curl_url_set(handle, CURLUPART_URL, text, 0) == CURLUE_OK else {
            throw ClientConfigurationError.url(TextTemplate.fill(localize("server url '%s' is not a URL; write it like https://cc.campus.example/"), text))
        }
        func part(_ which: CURLUPart) -> String? {
            var value: UnsafeMutablePointer<CChar>?
            guard curl_url_get(handle, which, &value, 0) == CURLUE_OK, let value else { return nil }
            defer { curl_free(value) }
            return String(cString: value)
        }
        scheme = (part(CURLUPART_SCHEME) ?? "").lowercased()
        host = (part(CURLUPART_HOST) ?? "").lowercased()
        guard !host.isEmpty else {
            throw ClientConfigurationError.url(TextTemplate.fill(localize("server url '%s' has no host name; write it like https://cc.campus.example/"), text))
        }
        guard scheme == "https" || scheme == "http" else {
            throw ClientConfigurationError.url(TextTemplate.fill(localize("server url '%s' must start with https://"), text))
        }
        if scheme == "http" && !Loopback.isLoopbackHost(host) {
            throw ClientConfigurationError.url(
                TextTemplate.fill(localize("server url '%s' uses plain http, which is only allowed to a loopback address; use https://"), text))
        }
        if part(CURLUPART_USER) != nil || part(CURLUPART_PASSWORD) != nil {
            throw ClientConfigurationError.url(
                localize("server url must not hold a user name or password (user:password@); a password login takes [auth] user and the keyring"))
        }
        if part(CURLUPART_QUERY) != nil || part(CURLUPART_FRAGMENT) != nil {
            throw ClientConfigurationError.url(TextTemplate.fill(localize("server url '%s' must not have a query or fragment"), text))
        }
        base = text.hasSuffix("/") ? text : text + "/"
    }
}

extension ClientConfigurationError {
    /// A problem with `[server] url`.
    static func url(_ message: String) -> ClientConfigurationError { ClientConfigurationError(message, key: "server.url") }
}
