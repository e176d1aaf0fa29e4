import CoreVocabulary

/// A webhook (`webhook = https://HOST/PATH`, `forward = jsons://HOST/PATH`):
/// the alert as JSON — `id`, `kind`, `title`, `body`, `urgency`,
/// `posted_at`, `host`, `late`; a 2xx is a delivery. Every path segment may
/// be its token.
struct Webhook: WebService {
    let name = "webhook"
    let title = "webhook"
    let schemes = ["json", "jsons"]
    let configurationKey = "webhook"
    let messageRoom = 32_000

    func check(_ url: TargetURL) throws(ForwardTargetProblem) {}

    /// Its long segments are tokens: the outbox name does not keep them.
    func outboxPath(_ segments: [Substring]) -> String {
        segments.map { $0.count >= 16 ? "…" : String($0) }.joined(separator: "/")
    }

    func request(_ content: PushContent, to url: TargetURL, proxy: String?) -> ForwardRequest {
        let alert = content.alert
        let body = JSONText.object([
            ("id", JSONText.string(alert.key)), ("kind", JSONText.string(alert.kind.rawValue)), ("title", JSONText.string(alert.title)),
            ("body", JSONText.string(alert.body)), ("urgency", JSONText.string(Self.urgencyName(alert.urgency))),
            ("posted_at", String(Int64(alert.postedAt.isFinite ? max(0, min(alert.postedAt, 253_402_300_800)) : 0))),
            ("host", JSONText.string(alert.host)), ("late", alert.late ? "true" : "false"),
        ])
        // Every path segment of a webhook may be its token, however short.
        return ForwardRequest(url: url.text, headers: content.headers, body: body, proxy: proxy, secretValues: url.pathSegments.map(String.init))
    }

    static func urgencyName(_ urgency: Urgency) -> String {
        switch urgency {
        case .critical: "critical"
        case .normal: "normal"
        case .low: "low"
        }
    }
}
