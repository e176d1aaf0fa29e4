import CoreVocabulary

/// A push service's verdict table: where its JSON answer says yes or no,
/// and whose fault each no is.
public struct AnswerCodes: Sendable, Hashable {
    /// The service as people know it, for the sentence.
    public var service: String
    /// The first of these present must be `success` (a number).
    public var fields: [String]
    public var success: Int
    /// The members that say why not.
    public var words: [String]
    /// Codes (or reasons containing one of `targetWords`) that refuse the target: a wrong key or token.
    public var targetCodes: Set<Int>
    public var targetWords: [String]
    /// Codes that ask to wait (its rate limits); any other code refuses this message.
    public var retryCodes: Set<Int>

    public init(service: String, fields: [String], success: Int, words: [String], targetCodes: Set<Int> = [], targetWords: [String] = [],
                retryCodes: Set<Int> = []) {
        self.service = service
        self.fields = fields
        self.success = success
        self.words = words
        self.targetCodes = targetCodes
        self.targetWords = targetWords
        self.retryCodes = retryCodes
    }
}

/// How a target's answer says it took a message. ntfy, gotify and a webhook
/// answer a 2xx; the push services answer HTTP 200 and put their verdict in
/// the JSON (`code`, `errcode`, `ok`): a 200 whose code is not the success
/// one is a refusal, in the service's own words — of the target (the codes
/// each service documents for a wrong key or token), of the moment (its
/// rate limits), or else of this message alone.
public enum AnswerRule: Sendable, Hashable {
    /// A 2xx is a delivery.
    case status
    /// A 2xx whose code is the table's success value.
    case code(AnswerCodes)
    /// `ok` must be `true` (Telegram); `description` says why not, and a 400
    /// whose description has one of `targetWords` refuses the target.
    case okFlag(service: String, targetWords: [String])
    /// SMTP: the last reply code must be 2xx; a 4xx is a try-again; a 5xx
    /// refuses the message when it came at the message's end (DATA), the target otherwise (login, sender, recipient).
    case smtp

    /// What the answer means; `afterData`: an SMTP reply to the message's end.
    public func judge(status: Int, body: String, afterData: Bool = false) -> ForwardVerdict {
        let delivered = (200..<300).contains(status)
        switch self {
        case .status:
            if delivered { return .delivered }
            return Self.byStatus(status, "HTTP \(status)" + (body.isEmpty ? "" : ": " + body))
        case .code(let table):
            let members = JSONScan.members(body)
            let field = table.fields.first { members?[$0] != nil } ?? table.fields[0]
            let code = members?[field].flatMap { if case .number(let text) = $0 { Int(text) } else { nil } }
            if delivered && code == table.success { return .delivered }
            let said = table.words.lazy.compactMap { members?[$0].flatMap(Self.text) }.first { !$0.isEmpty }
            let sentence = Self.sentence(table.service, status: status, code: code.map { "\(field) \($0)" }, said: said, body: body)
            guard let code else { return delivered ? .retry(sentence) : Self.byStatus(status, sentence) }
            if table.targetCodes.contains(code) || table.targetWords.contains(where: { said?.lowercased().contains($0) == true }) {
                return .refused(sentence)
            }
            if table.retryCodes.contains(code) || status == 429 || status >= 500 { return .retry(sentence) }
            return [401, 403, 404].contains(status) ? .refused(sentence) : .refusedForGood(sentence)
        case .smtp:
            if delivered { return .delivered }
            let sentence = "E-mail: " + (body.isEmpty ? "no answer" : body) + (status > 0 ? " (SMTP \(status))" : "")
            guard status >= 500 else { return .retry(sentence) }
            return afterData ? .refusedForGood(sentence) : .refused(sentence)
        case .okFlag(let service, let targetWords):
            let members = JSONScan.members(body)
            if delivered && members?["ok"] == .bool(true) { return .delivered }
            let said = members?["description"].flatMap(Self.text)
            let code = members?["error_code"].flatMap(Self.text)
            let sentence = Self.sentence(service, status: status, code: code.map { "error \($0)" }, said: said, body: body)
            guard members?["ok"] == .bool(false) else { return delivered ? .retry(sentence) : Self.byStatus(status, sentence) }
            // A 400 names the chat or the bot when they are the trouble; else it is this message (too long, …).
            let lower = (said ?? "").lowercased()
            if status == 400, targetWords.contains(where: { lower.contains($0) }) { return .refused(sentence) }
            return status == 400 ? .refusedForGood(sentence) : Self.byStatus(status, sentence)
        }
    }

    /// An answer judged by its HTTP status alone: 413, 414, 415 and 422 are
    /// about this message; 408, 425, 429, a 5xx and no answer ask to wait;
    /// any other 4xx refuses the target (a wrong URL or token).
    public static func byStatus(_ status: Int, _ sentence: String) -> ForwardVerdict {
        if [413, 414, 415, 422].contains(status) { return .refusedForGood(sentence) }
        if (400..<500).contains(status) && ![408, 425, 429].contains(status) { return .refused(sentence) }
        return .retry(sentence)
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
