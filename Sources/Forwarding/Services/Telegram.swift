import CoreVocabulary

/// A Telegram bot (`tgram://BOT_TOKEN/CHAT_ID`, the chat a number or
/// `@channel`): `POST /botTOKEN/sendMessage` JSON `chat_id`, `text` (at
/// most 4,096 characters as Telegram counts them: UTF-16 units),
/// `disable_notification` for low urgency; answers `ok` true, else
/// `description` — a 400 naming the chat or the bot refuses the target, any
/// other 400 this message.
struct Telegram: KeyedPushService {
    let name = "telegram"
    let title = "Telegram"
    let schemes = ["tgram"]
    let options: Set<String> = ["api"]
    let messageRoom = 4000

    func target(_ url: ForwardURL, text: String, proxy: String?) throws(ForwardTargetProblem) -> ForwardTarget {
        guard url.segments.count == 2, Self.isBotToken(url.segments[0]), Self.isChat(url.segments[1]) else {
            throw ForwardTargetProblem { localize in
                localize("tgram:// needs the bot token from @BotFather and the chat, such as tgram://123456789:AAH…/987654321 (a chat id, or @channel)")
            }
        }
        return target(PushAddress(base: try url.apiBase("https://api.telegram.org"), key: url.segments[0], chat: url.segments[1]),
                      text: text, proxy: proxy)
    }

    func request(_ content: PushContent, to push: PushAddress, proxy: String?) -> ForwardRequest {
        let alert = content.alert
        return post(push.base + "/bot" + push.key + "/sendMessage", JSONText.object([
            ("chat_id", JSONText.string(push.chat ?? "")),
            ("text", JSONText.string(MessageText.cut(alert.title + "\n\n" + content.message, utf16: 4096))),
            ("disable_notification", alert.urgency == .low ? "true" : "false"),
        ]), .okFlag(service: title, targetWords: Self.targetWords), content, push, proxy)
    }

    /// Its 400 descriptions that are about the chat or the bot, not the message.
    static let targetWords = ["chat not found", "bot was blocked", "bot was kicked", "user is deactivated", "chat_id is empty",
                              "peer_id_invalid", "not enough rights", "group chat was upgraded", "need administrator rights"]

    /// `123456789:AAH…`: digits, a colon, then a key.
    static func isBotToken(_ text: String) -> Bool {
        let parts = text.split(separator: ":", maxSplits: 1)
        return parts.count == 2 && (1...20).contains(parts[0].count) && parts[0].allSatisfy(\.isASCII) && parts[0].allSatisfy(\.isNumber)
            && ForwardURL.isKey(String(parts[1]))
    }

    /// A chat id (`-100123`, `987654321`) or a public channel (`@name`).
    static func isChat(_ text: String) -> Bool {
        if text.hasPrefix("@") { return ForwardURL.isKey(String(text.dropFirst())) }
        let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        return (1...20).contains(digits.count) && digits.allSatisfy { $0.isASCII && $0.isNumber }
    }
}
