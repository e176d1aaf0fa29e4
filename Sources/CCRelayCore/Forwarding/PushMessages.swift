import CoreVocabulary

/// The request each push service documents, and how its answer says yes:
/// - Bark: `POST /push` JSON `device_key`, `title`, `body` (cut to 3,000
///   bytes: APNs takes 4 KiB in all, beyond it Bark answers PayloadTooLarge),
///   `level` (critical, timeSensitive, passive by urgency), `group` ccrelay;
///   answers `code` 200.
/// - ServerChan: `POST /SENDKEY.send` (Server³: `/send/SENDKEY.send`) JSON
///   `title` (at most 32 characters, counted in UTF-16), `desp`; answers `code` 0, else `message`.
/// - PushPlus: `POST /send` JSON `token`, `title`, `content`, `template` txt; answers `code` 200, else `msg`.
/// - WeCom group bot: `POST /cgi-bin/webhook/send?key=KEY` JSON
///   `msgtype` text, `text.content` (at most 2,048 bytes); answers `errcode` 0, else `errmsg`.
/// - DingTalk robot: `POST /robot/send?access_token=TOKEN[&timestamp=MS&sign=SIGN]`
///   JSON `msgtype` text, `text.content`; SIGN = URL-encoded
///   base64(HMAC-SHA256(secret, "MS\nsecret")); answers `errcode` 0, else `errmsg`.
/// - Feishu bot: `POST /open-apis/bot/v2/hook/HOOK_ID` JSON `msg_type` text,
///   `content.text`[, `timestamp` S, `sign` base64(HMAC-SHA256("S\nsecret", ""))];
///   answers `code` (older hooks `StatusCode`) 0, else `msg`.
/// - Telegram: `POST /botTOKEN/sendMessage` JSON `chat_id`, `text` (at most
///   4,096 characters as Telegram counts them: UTF-16 units), `disable_notification` for low urgency;
///   answers `ok` true, else `description`.
enum PushMessages {
    static func request(_ alert: ForwardedAlert, message: String, to target: ForwardTarget, push: PushAddress, headers: [String],
                        now: Double, hmacSHA256: (([UInt8], [UInt8]) -> [UInt8])?) -> ForwardRequest {
        let title = alert.title
        let text = title + "\n" + message
        let secrets = [push.key, push.secret].compactMap { $0 }
        func made(_ url: String, _ body: String, _ rule: AnswerRule) -> ForwardRequest {
            ForwardRequest(url: url, headers: headers, body: body, proxy: target.proxy, rule: rule, secretValues: secrets)
        }
        switch target.service {
        case .bark:
            let level =
                switch alert.urgency {
                case .critical: "critical"
                case .normal: "timeSensitive"
                case .low: "passive"
                }
            return made(push.base + "/push", JSONText.object([
                ("device_key", JSONText.string(push.key)), ("title", JSONText.string(cut(title, bytes: 200))),
                ("body", JSONText.string(cut(message, bytes: 3000))), ("level", JSONText.string(level)),
                ("group", JSONText.string("ccrelay")),
            ]), .code(service: "Bark", fields: ["code"], success: 200, words: ["message"], targetWords: ["device token", "device key"]))
        case .serverchan:
            let path = push.base.hasSuffix(".push.ft07.com") ? "/send/" : "/"
            // 40001: a SendKey it does not know, or the day's quota used up: either way the queue waits.
            return made(push.base + path + push.key + ".send", JSONText.object([
                ("title", JSONText.string(cut(title, utf16: 32))), ("desp", JSONText.string(cut(message, bytes: 30_000))),
            ]), .code(service: "ServerChan", fields: ["code"], success: 0, words: ["message", "info"], targetCodes: [40001]))
        case .pushplus:
            return made(push.base + "/send", JSONText.object([
                ("token", JSONText.string(push.key)), ("title", JSONText.string(title)), ("content", JSONText.string(message)),
                ("template", JSONText.string("txt")),
            ]), .code(service: "PushPlus", fields: ["code"], success: 200, words: ["msg"], targetCodes: [900, 903], retryCodes: [500, 999]))
        case .wecom:
            return made(push.base + "/cgi-bin/webhook/send?key=" + push.key, JSONText.object([
                ("msgtype", JSONText.string("text")), ("text", JSONText.object([("content", JSONText.string(cut(text, bytes: 2048)))])),
            ]), .code(service: "WeCom", fields: ["errcode"], success: 0, words: ["errmsg"], targetCodes: [93000, 93004, 40014],
                      retryCodes: [-1, 45009]))
        case .dingtalk:
            var url = push.base + "/robot/send?access_token=" + push.key
            if let secret = push.secret, let hmacSHA256 {
                let milliseconds = Int64(now * 1000)
                let signature = base64(hmacSHA256(Array(secret.utf8), Array("\(milliseconds)\n\(secret)".utf8)))
                url += "&timestamp=\(milliseconds)&sign=" + PercentEncoding.encode(signature)
            }
            return made(url, JSONText.object([
                ("msgtype", JSONText.string("text")), ("text", JSONText.object([("content", JSONText.string(cut(text, bytes: 20_000)))])),
            ]), .code(service: "DingTalk", fields: ["errcode"], success: 0, words: ["errmsg"], targetCodes: [300001, 300005, 310000],
                      retryCodes: [-1, 130101, 410100]))
        case .feishu:
            var members = [
                ("msg_type", JSONText.string("text")), ("content", JSONText.object([("text", JSONText.string(cut(text, bytes: 20_000)))])),
            ]
            if let secret = push.secret, let hmacSHA256 {
                let seconds = Int64(now)
                members += [("timestamp", JSONText.string("\(seconds)")),
                            ("sign", JSONText.string(base64(hmacSHA256(Array("\(seconds)\n\(secret)".utf8), []))))]
            }
            return made(push.base + "/open-apis/bot/v2/hook/" + push.key, JSONText.object(members),
                        .code(service: "Feishu", fields: ["code", "StatusCode"], success: 0, words: ["msg", "StatusMessage"],
                              targetCodes: [19021, 19022, 19024], retryCodes: [11232]))
        case .telegram:
            return made(push.base + "/bot" + push.key + "/sendMessage", JSONText.object([
                ("chat_id", JSONText.string(push.chat ?? "")), ("text", JSONText.string(cut(title + "\n\n" + message, utf16: 4096))),
                ("disable_notification", alert.urgency == .low ? "true" : "false"),
            ]), .okFlag(service: "Telegram"))
        case .ntfy, .gotify, .webhook, .mail:
            // Not push services (they have no push address): ForwardMessage writes their requests.
            return made(target.url, "{}", .status)
        }
    }

    /// `text` in at most `bytes` UTF-8 bytes, whole characters, `…` where it was cut.
    static func cut(_ text: String, bytes: Int) -> String {
        cut(text, limit: bytes, ellipsis: 3) { $0.utf8.count }
    }

    /// `text` in at most `utf16` UTF-16 code units — what Telegram and
    /// ServerChan count (an emoji outside the BMP is two) — whole characters, `…` where it was cut.
    static func cut(_ text: String, utf16: Int) -> String {
        cut(text, limit: utf16, ellipsis: 1) { $0.utf16.count }
    }

    /// Whole characters while their `size` fits in `limit` with the ellipsis's; a
    /// character larger than the rest of the room (a long combining sequence) ends the text.
    private static func cut(_ text: String, limit: Int, ellipsis: Int, size: (Character) -> Int) -> String {
        guard text.reduce(0, { $0 + size($1) }) > limit else { return text }
        var kept = ""
        var used = 0
        for character in text {
            let next = size(character)
            guard used + next <= limit - ellipsis else { break }
            kept.append(character)
            used += next
        }
        return kept + "…"
    }

    static func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            let value = chunk.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (16 - 8 * UInt32($1.offset)) }
            for position in 0..<4 {
                out.append(position <= chunk.count ? alphabet[Int(value >> (18 - 6 * UInt32(position)) & 0x3F)] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}
