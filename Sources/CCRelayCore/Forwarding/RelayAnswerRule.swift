/// How a target's answer says it took a message. ntfy, gotify and a webhook
/// answer a 2xx; the push services answer HTTP 200 and put their verdict in
/// the JSON (`code`, `errcode`, `ok`): a 200 whose code is not the success
/// one is a refusal, in the service's own words.
public enum RelayAnswerRule: Sendable, Hashable {
    /// A 2xx is a delivery.
    case status
    /// The first of `fields` present must be `success` (a number); `words` hold the reason otherwise.
    case code(service: String, fields: [String], success: Int, words: [String])
    /// `ok` must be `true` (Telegram); `description` says why not.
    case okFlag(service: String)
    /// SMTP: the last reply code must be 2xx; a 5xx is a refusal, a 4xx a try-again.
    case smtp

    /// What the answer means: nil when the message was taken, else why not —
    /// the service's own words when it gave some (`ServerChan: 今日免费额度已用完`).
    /// `refused`: the service answered and said no (waiting does not change that).
    public func judge(status: Int, body: String) -> (failure: String?, refused: Bool) {
        let delivered = (200..<300).contains(status)
        switch self {
        case .status:
            return (delivered ? nil : "HTTP \(status)" + (body.isEmpty ? "" : ": " + body), false)
        case .code(let service, let fields, let success, let words):
            let members = JSONScan.members(body)
            let field = fields.first { members?[$0] != nil } ?? fields[0]
            let code = members?[field].flatMap { if case .number(let text) = $0 { Int(text) } else { nil } }
            if delivered && code == success { return (nil, false) }
            let said = words.lazy.compactMap { members?[$0].flatMap(Self.text) }.first { !$0.isEmpty }
            return (Self.sentence(service, status: status, code: code.map { "\(field) \($0)" }, said: said, body: body), code != nil)
        case .smtp:
            if delivered { return (nil, false) }
            return ("E-mail: " + (body.isEmpty ? "no answer" : body) + (status > 0 ? " (SMTP \(status))" : ""), status >= 500)
        case .okFlag(let service):
            let members = JSONScan.members(body)
            if delivered && members?["ok"] == .bool(true) { return (nil, false) }
            let said = members?["description"].flatMap(Self.text)
            let code = members?["error_code"].flatMap(Self.text)
            return (Self.sentence(service, status: status, code: code.map { "error \($0)" }, said: said, body: body), members?["ok"] == .bool(false))
        }
    }

    private static func text(_ scalar: JSONScan.Scalar) -> String? {
        switch scalar {
        case .string(let text), .number(let text): text
        case .bool(let value): value ? "true" : "false"
        case .null: nil
        }
    }

    /// `Service: words (code N, HTTP S)`, or the answer itself when it said nothing readable.
    private static func sentence(_ service: String, status: Int, code: String?, said: String?, body: String) -> String {
        let details = [code, "HTTP \(status)"].compactMap { $0 }.joined(separator: ", ")
        guard let said else { return "\(service): HTTP \(status)" + (body.isEmpty ? "" : ": " + body) }
        return "\(service): \(said) (\(details))"
    }
}
