import CoreVocabulary

/// What a target's answer means for the message and for the target's queue —
/// one verdict for the forwarding lanes and for `ccrelay relay test` alike.
public enum ForwardVerdict: Sendable, Hashable {
    /// The target took the message.
    case delivered
    /// Not now (no connection, a timeout, a 5xx, a 429, an SMTP 4xx, a
    /// service's rate limit): the message waits and is tried again.
    case retry(String)
    /// The target refuses every message (a wrong URL, key, token, chat, login
    /// or recipient): the queue waits, and the user is told what to fix.
    case targetRefused(String)
    /// This message alone cannot go (too long, a form the service cannot
    /// take, a mail refused at its end): it is given up, the next one goes.
    case messageRefused(String)

    /// Why it was not delivered; nil when it was.
    public var failure: String? {
        switch self {
        case .delivered: nil
        case .retry(let why), .targetRefused(let why), .messageRefused(let why): why
        }
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
    /// The first of `fields` present must be `success` (a number); `words`
    /// hold the reason otherwise. `targetCodes` (or a reason containing one of
    /// `targetWords`) refuse the target, `retryCodes` ask to wait; any other code refuses the message.
    case code(service: String, fields: [String], success: Int, words: [String], targetCodes: Set<Int> = [], targetWords: [String] = [],
              retryCodes: Set<Int> = [])
    /// `ok` must be `true` (Telegram); `description` says why not.
    case okFlag(service: String)
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
        case .code(let service, let fields, let success, let words, let targetCodes, let targetWords, let retryCodes):
            let members = JSONScan.members(body)
            let field = fields.first { members?[$0] != nil } ?? fields[0]
            let code = members?[field].flatMap { if case .number(let text) = $0 { Int(text) } else { nil } }
            if delivered && code == success { return .delivered }
            let said = words.lazy.compactMap { members?[$0].flatMap(Self.text) }.first { !$0.isEmpty }
            let sentence = Self.sentence(service, status: status, code: code.map { "\(field) \($0)" }, said: said, body: body)
            guard let code else { return delivered ? .retry(sentence) : Self.byStatus(status, sentence) }
            if targetCodes.contains(code) || targetWords.contains(where: { said?.lowercased().contains($0) == true }) {
                return .targetRefused(sentence)
            }
            if retryCodes.contains(code) || status == 429 || status >= 500 { return .retry(sentence) }
            return [401, 403, 404].contains(status) ? .targetRefused(sentence) : .messageRefused(sentence)
        case .smtp:
            if delivered { return .delivered }
            let sentence = "E-mail: " + (body.isEmpty ? "no answer" : body) + (status > 0 ? " (SMTP \(status))" : "")
            guard status >= 500 else { return .retry(sentence) }
            return afterData ? .messageRefused(sentence) : .targetRefused(sentence)
        case .okFlag(let service):
            let members = JSONScan.members(body)
            if delivered && members?["ok"] == .bool(true) { return .delivered }
            let said = members?["description"].flatMap(Self.text)
            let code = members?["error_code"].flatMap(Self.text)
            let sentence = Self.sentence(service, status: status, code: code.map { "error \($0)" }, said: said, body: body)
            guard members?["ok"] == .bool(false) else { return delivered ? .retry(sentence) : Self.byStatus(status, sentence) }
            // Telegram: a 400 names the chat or the bot when they are the trouble; else it is this message (too long, …).
            let lower = (said ?? "").lowercased()
            if status == 400, Self.telegramTargetWords.contains(where: { lower.contains($0) }) { return .targetRefused(sentence) }
            return status == 400 ? .messageRefused(sentence) : Self.byStatus(status, sentence)
        }
    }

    /// Telegram's 400 descriptions that are about the chat or the bot, not the message.
    static let telegramTargetWords = ["chat not found", "bot was blocked", "bot was kicked", "user is deactivated", "chat_id is empty",
                                      "peer_id_invalid", "not enough rights", "group chat was upgraded", "need administrator rights"]

    /// An answer judged by its HTTP status alone: 413, 414, 415 and 422 are
    /// about this message; 408, 425, 429, a 5xx and no answer ask to wait;
    /// any other 4xx refuses the target (a wrong URL or token).
    public static func byStatus(_ status: Int, _ sentence: String) -> ForwardVerdict {
        if [413, 414, 415, 422].contains(status) { return .messageRefused(sentence) }
        if (400..<500).contains(status) && ![408, 425, 429].contains(status) { return .targetRefused(sentence) }
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
