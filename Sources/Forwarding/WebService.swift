import CoreVocabulary

/// A service whose target is an https URL, with a `[relay]` key of its own
/// besides `forward =` (ntfy, gotify, a webhook): `ntfy = https://HOST/TOPIC`
/// and `forward = ntfys://HOST/TOPIC` are the same target (`ntfy://` plain
/// http, to a loopback address only, as Apprise reads it).
protocol WebService: PushService {
    /// Its `[relay]` key.
    var configurationKey: String { get }
    /// What its URL must hold besides being a usable https URL (ntfy's topic, gotify's token).
    func check(_ url: TargetURL) throws(ForwardTargetProblem)
    /// The URL a `forward =` line of its schemes stands for; `scheme` is `https://` or `http://`.
    func url(_ forward: ForwardURL, scheme: String) throws(ForwardTargetProblem) -> String
    /// The outbox name's path: what stays the same when the user fixes a secret in it.
    func outboxPath(_ segments: [Substring]) -> String
    func request(_ content: PushContent, to url: TargetURL, proxy: String?) -> ForwardRequest
}

extension WebService {
    func url(_ forward: ForwardURL, scheme: String) throws(ForwardTargetProblem) -> String {
        scheme + forward.segments.joined(separator: "/")
    }

    func outboxPath(_ segments: [Substring]) -> String { segments.joined(separator: "/") }

    public func target(_ forward: ForwardURL, text: String, proxy: String?) throws(ForwardTargetProblem) -> ForwardTarget {
        let secure = forward.scheme.hasSuffix("s")
        let url = try self.url(forward, scheme: secure ? "https://" : "http://")
        do {
            return try ForwardTarget(web: self, url: url, proxy: proxy)
        } catch {
            // Plain http goes to a loopback address only; else the service's own words on its URL.
            if !secure, TargetURL(url) == nil, TargetURL("https://" + url.dropFirst("http://".count)) != nil {
                let scheme = forward.scheme
                throw ForwardTargetProblem { localize in
                    TextTemplate.fill(localize("%s:// is plain http, as Apprise reads it, which goes only to a loopback address: use %s:// for https"),
                                      scheme, scheme + "s")
                }
            }
            throw error
        }
    }

    public func request(_ content: PushContent, to target: ForwardTarget) -> ForwardRequest {
        // Its targets' URLs were checked when they were made.
        guard let url = TargetURL(target.url) else { return ForwardRequest(url: target.url, headers: content.headers, body: "{}", proxy: target.proxy) }
        return request(content, to: url, proxy: target.proxy)
    }
}
