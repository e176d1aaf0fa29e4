import CCurl

/// A URL as libcurl's own parser reads it (so what is checked is what will
/// be fetched), absolute, or a reference resolved against a base the way a
/// browser follows a `Location`.
struct SrunURL {
    /// The whole URL as libcurl writes it back.
    let text: String
    /// Lowercase.
    let scheme: String
    let host: String
    let port: String?
    let hasCredentials: Bool
    let hasQueryOrFragment: Bool

    /// `scheme://host[:port]/`.
    var origin: String { scheme + "://" + host + (port.map { ":" + $0 } ?? "") + "/" }

    /// nil when libcurl cannot read `reference` (resolved against `base`, when given) as a URL.
    init?(_ reference: String, relativeTo base: String? = nil) {
        guard let handle = curl_url() else { return nil }
        defer { curl_url_cleanup(handle) }
        if let base, curl_url_set(handle, CURLUPART_URL, base, 0) != CURLUE_OK { return nil }
        guard curl_url_set(handle, CURLUPART_URL, reference, 0) == CURLUE_OK else { return nil }
        func part(_ which: CURLUPart) -> String? {
            var value: UnsafeMutablePointer<CChar>?
            guard curl_url_get(handle, which, &value, 0) == CURLUE_OK, let value else { return nil }
            defer { curl_free(value) }
            return String(cString: value)
        }
        guard let text = part(CURLUPART_URL), let scheme = part(CURLUPART_SCHEME), let host = part(CURLUPART_HOST), !host.isEmpty else {
            return nil
        }
        self.text = text
        self.scheme = scheme.lowercased()
        self.host = host.lowercased()
        port = part(CURLUPART_PORT)
        hasCredentials = part(CURLUPART_USER) != nil || part(CURLUPART_PASSWORD) != nil
        hasQueryOrFragment = part(CURLUPART_QUERY) != nil || part(CURLUPART_FRAGMENT) != nil
    }

    /// True for `http` and `https`: the only schemes a portal is reached over.
    var isWeb: Bool { scheme == "http" || scheme == "https" }
}
