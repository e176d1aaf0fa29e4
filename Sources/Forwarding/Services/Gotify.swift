import CoreVocabulary

/// gotify (`gotify = https://HOST/message?token=APP_TOKEN`, `forward =
/// gotifys://HOST[/PATH]/APP_TOKEN`): `POST /message?token=…` with `title`,
/// `message`, `priority` (critical 8 — its Android app rings from 8 —,
/// normal 5, low 2) and plain text; a 2xx is a delivery.
struct Gotify: WebService {
    let name = "gotify"
    let title = "gotify"
    let schemes = ["gotify", "gotifys"]
    let configurationKey = "gotify"
    let messageRoom = 32_000

    func check(_ url: TargetURL) throws(ForwardTargetProblem) {
        guard url.queryItem("token").map({ !$0.isEmpty }) == true else {
            throw ForwardTargetProblem { localize in
                localize("gotify needs the application token in the URL, such as https://gotify.campus.example/message?token=APP_TOKEN (Apps → create application in gotify's web UI)")
            }
        }
    }

    func url(_ forward: ForwardURL, scheme: String) throws(ForwardTargetProblem) -> String {
        guard forward.segments.count >= 2, let token = forward.segments.last else {
            let scheme = forward.scheme
            throw ForwardTargetProblem { localize in
                TextTemplate.fill(localize("%s:// needs the server and the application token, such as gotifys://gotify.campus.example/APP_TOKEN"), scheme)
            }
        }
        return scheme + forward.segments.dropLast().joined(separator: "/") + "/message?token=" + token
    }

    func request(_ content: PushContent, to url: TargetURL, proxy: String?) -> ForwardRequest {
        let alert = content.alert
        let body = JSONText.object([
            ("title", JSONText.string(alert.title)), ("message", JSONText.string(content.message)),
            ("priority", String(Self.priority(alert.urgency))),
            ("extras", JSONText.object([("client::display", JSONText.object([("contentType", JSONText.string("text/plain"))]))])),
        ])
        return ForwardRequest(url: url.text, headers: content.headers, body: body, proxy: proxy)
    }

    /// gotify's priorities (0-10; its Android app rings from 8).
    static func priority(_ urgency: Urgency) -> Int {
        switch urgency {
        case .critical: 8
        case .normal: 5
        case .low: 2
        }
    }
}
