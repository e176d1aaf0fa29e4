import CoreVocabulary

/// ntfy (`ntfy = https://HOST/TOPIC`, `forward = ntfys://HOST/TOPIC`): JSON
/// publishing to the server's root — `topic`, `title`, `message`,
/// `priority` 5/3/2 for critical/normal/low, `tags` (an emoji for the
/// urgency, `ccrelay`, the host); a 2xx is a delivery.
struct Ntfy: WebService {
    let name = "ntfy"
    let title = "ntfy"
    let schemes = ["ntfy", "ntfys"]
    let configurationKey = "ntfy"
    let messageRoom = 4000

    func check(_ url: TargetURL) throws(ForwardTargetProblem) {
        guard let topic = url.pathSegments.last, Self.isTopic(topic) else {
            throw ForwardTargetProblem { localize in
                localize("ntfy needs the server and the topic, such as https://ntfy.campus.example/ccrelay-20231234 (a topic is 1-64 letters, digits, - or _)")
            }
        }
    }

    func request(_ content: PushContent, to url: TargetURL, proxy: String?) -> ForwardRequest {
        let alert = content.alert
        let topic = url.pathSegments.last.map(String.init) ?? ""
        let root = url.scheme + "://" + url.authority + "/" + url.pathSegments.dropLast().map { $0 + "/" }.joined()
        let body = JSONText.object([
            ("topic", JSONText.string(topic)), ("title", JSONText.string(alert.title)), ("message", JSONText.string(content.message)),
            ("priority", String(Self.priority(alert.urgency))),
            ("tags", JSONText.array([Self.tag(alert), "ccrelay", alert.host].map(JSONText.string))),
        ])
        // The topic is a secret (whoever knows it reads the alerts): never in what the answer shows.
        return ForwardRequest(url: root + (url.query.map { "?" + $0 } ?? ""), headers: content.headers, body: body, proxy: proxy,
                              secretValues: [topic])
    }

    /// ntfy's priorities: 5 urgent, 3 default, 2 low.
    static func priority(_ urgency: Urgency) -> Int {
        switch urgency {
        case .critical: 5
        case .normal: 3
        case .low: 2
        }
    }

    /// The emoji tag ntfy shows before the title.
    static func tag(_ alert: ForwardedAlert) -> String {
        if alert.kind == .backOnline { return "white_check_mark" }
        switch alert.urgency {
        case .critical: return "rotating_light"
        case .normal: return "warning"
        case .low: return "information_source"
        }
    }

    /// ntfy's topic rule: 1 to 64 of `A-Z a-z 0-9 _ -`.
    static func isTopic(_ text: Substring) -> Bool {
        (1...64).contains(text.count) && text.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == "-"
        }
    }
}
