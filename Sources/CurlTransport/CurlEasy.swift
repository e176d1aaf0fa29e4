import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// One libcurl easy handle: keeps its TLS session between requests (its
/// connection is kept by the multi handle it runs in). Not thread-safe: the
/// `CCClient` owning it uses it on its loop.
public final class CurlEasy {
    public let handle: UnsafeMutableRawPointer
    private var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)

    /// libcurl's global setup, once per process, before the first handle.
    private static let globalSetup: Void = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

    public static func setUpGlobally() { globalSetup }

    public init() {
        Self.setUpGlobally()
        guard let handle = curl_easy_init() else { fatalError("curl_easy_init failed: out of memory") }
        self.handle = handle
        _ = errorBuffer.withUnsafeMutableBufferPointer { ccurl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, $0.baseAddress) }
    }

    deinit { curl_easy_cleanup(handle) }

    /// The funnel for `curl_easy_setopt`: a refused option is a configuration
    /// error naming the option, never silently ignored.
    public func set(_ option: CURLoption, _ value: Int, _ what: String) throws(ClientConfigurationError) {
        try check(ccurl_setopt_long(handle, option, value), what)
    }

    public func set(_ option: CURLoption, _ value: String?, _ what: String) throws(ClientConfigurationError) {
        try check(ccurl_setopt_string(handle, option, value), what)
    }

    public func set(_ option: CURLoption, list: UnsafeMutablePointer<curl_slist>?, _ what: String) throws(ClientConfigurationError) {
        try check(ccurl_setopt_slist(handle, option, list), what)
    }

    public func set(_ option: CURLoption, pointer: UnsafeMutableRawPointer?, _ what: String) throws(ClientConfigurationError) {
        try check(ccurl_setopt_pointer(handle, option, pointer), what)
    }

    /// A time option in milliseconds (`…_MS`), at least 1 (0 would mean none).
    public func set(_ option: CURLoption, _ duration: Duration, _ what: String) throws(ClientConfigurationError) {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        try set(option, Int(max(min(milliseconds, Int64(Int32.max)), 1)), what)
    }

    /// The transport rules every ccrelay request keeps, to the CC server and
    /// to a relay target alike: never through a proxy (whatever the
    /// environment says), no redirects, no signals, only `scheme`, and TLS 1.2
    /// or newer with the peer and its name verified against `caFile` (the
    /// system's store when nil). Plain http goes to this computer only,
    /// unless `loopbackOnlyForHTTP` is false (a Srun portal speaks plain http
    /// on the campus network).
    public func setStrictTransport(scheme: String, caFile: String?, caFileName: String, userAgent: String, loopbackOnlyForHTTP: Bool = true)
        throws(ClientConfigurationError)
    {
        try set(CURLOPT_USERAGENT, userAgent, "the User-Agent")
        try set(CURLOPT_PROXY, "", "disabling proxies")
        try set(CURLOPT_NOPROXY, "*", "disabling proxies")
        try set(CURLOPT_FOLLOWLOCATION, 0, "refusing redirects")
        try set(CURLOPT_NOSIGNAL, 1, "NOSIGNAL")
        try check(ccurl_setopt_only_protocol(handle, scheme), "the protocol")
        try set(CURLOPT_SSL_VERIFYPEER, 1, "server certificate verification")
        try set(CURLOPT_SSL_VERIFYHOST, 2, "server name verification")
        try set(CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_2), "TLS 1.2 or newer")
        if let caFile { try set(CURLOPT_CAINFO, caFile, "\(caFileName) \(caFile)") }
        // Plain http goes to this computer only: checked on the address curl
        // connects to, not just on the name the URL gives.
        if scheme == "http" && loopbackOnlyForHTTP {
            try check(ccurl_setopt_opensocket_function(handle, openLoopbackSocketOnly), "the loopback-only socket")
        }
    }

    /// The settings of a handle that asks one campus server again and again
    /// (the CC server, a Srun portal) over a kept connection: the strict
    /// transport for `scheme`, TCP keep-alive, no cached names (a new
    /// connection, rare since one is kept, resolves afresh, so a network
    /// change never reuses another network's answer), the connect timeout,
    /// the pinned key, the bound interface, and the answer read into the
    /// `ResponseBuffer` a request names (`CURLOPT_WRITEDATA`, `CURLOPT_HEADERDATA`).
    public func setServerTransport(scheme: String, caFile: String?, userAgent: String, loopbackOnlyForHTTP: Bool, connectTimeout: Duration,
                                   pinnedKey: String?, interface: String?) throws(ClientConfigurationError) {
        try setStrictTransport(scheme: scheme, caFile: caFile, caFileName: "ca-file", userAgent: userAgent, loopbackOnlyForHTTP: loopbackOnlyForHTTP)
        try set(CURLOPT_TCP_KEEPALIVE, 1, "TCP keep-alive")
        try set(CURLOPT_DNS_CACHE_TIMEOUT, 0, "no DNS cache")
        try set(CURLOPT_CONNECTTIMEOUT_MS, connectTimeout, "the connect timeout")
        if let pinnedKey { try set(CURLOPT_PINNEDPUBLICKEY, pinnedKey, "pinned-key") }
        if let interface { try set(CURLOPT_INTERFACE, "if!" + interface, "interface \(interface)") }
        _ = ccurl_setopt_write_function(handle, appendToResponseBuffer)
        _ = ccurl_setopt_header_function(handle, takeResponseHeader)
    }

    private func check(_ code: CURLcode, _ what: String) throws(ClientConfigurationError) {
        guard code == CURLE_OK else {
            throw ClientConfigurationError("libcurl refused \(what): \(String(cString: curl_easy_strerror(code)))")
        }
    }

    /// The detail libcurl wrote for the last failure, or its generic text.
    public func failureText(_ code: CURLcode) -> String {
        let detail = errorBuffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
    }

    public func clearError() { errorBuffer[0] = 0 }

    public func info(_ item: CURLINFO) -> Int {
        var value = 0
        _ = ccurl_getinfo_long(handle, item, &value)
        return value
    }

    /// The address of the last connection (`CURLINFO_PRIMARY_IP`), when there was one.
    public var primaryAddress: String? {
        var text: UnsafeMutablePointer<CChar>?
        guard ccurl_getinfo_string(handle, CURLINFO_PRIMARY_IP, &text) == CURLE_OK, let text, text.pointee != 0 else { return nil }
        return String(cString: text)
    }

    /// libcurl's version and its TLS library (`libcurl 7.88.1, OpenSSL/3.0.15`).
    public static var version: String {
        guard let info = ccurl_version_info() else { return "libcurl (unknown version)" }
        let tls = info.pointee.ssl_version.map { String(cString: $0) } ?? "no TLS"
        return "libcurl \(String(cString: info.pointee.version)), \(tls)"
    }
}

/// libcurl's open-socket function for plain-http requests: a socket only
/// for an address of this computer (127.0.0.0/8, ::1, or ::ffff:127.x);
/// any other address fails the connection (CURL_SOCKET_BAD) before a byte is sent.
public let openLoopbackSocketOnly: @convention(c) (UnsafeMutableRawPointer?, curlsocktype, UnsafeMutablePointer<curl_sockaddr>?) -> curl_socket_t = {
    _, _, address in
    guard let address else { return -1 }
    let family = address.pointee.family
    let loopback: Bool = withUnsafePointer(to: &address.pointee.addr) { raw in
        switch family {
        case AF_INET:
            return raw.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt32(bigEndian: $0.pointee.sin_addr.s_addr) >> 24 == 127 }
        case AF_INET6:
            // curl's address storage is a sockaddr_storage: room for the IPv6 form.
            return raw.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address6 in
                withUnsafeBytes(of: address6.pointee.sin6_addr) { bytes in
                    bytes.prefix(15).allSatisfy { $0 == 0 } && bytes[15] == 1
                        || bytes.prefix(10).allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF && bytes[12] == 127
                }
            }
        default:
            return false
        }
    }
    guard loopback else { return -1 }
    return socket(family, address.pointee.socktype, address.pointee.protocol)
}
