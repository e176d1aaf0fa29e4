import CoreVocabulary

/// A Feishu (Lark) bot (`feishu://HOOK_ID[?secret=SECRET]`): `POST
/// /open-apis/bot/v2/hook/HOOK_ID` JSON `msg_type` text, `content.text`[,
/// `timestamp` S, `sign` base64(HMAC-SHA256("S\nsecret", ""))]; answers
/// `code` (older hooks `StatusCode`) 0, else `msg`.
struct Feishu: KeyedPushService {
    let name = "feishu"
    let title = "Feishu"
    let schemes = ["feishu"]
    let options: Set<String> = ["api", "secret"]
    let messageRoom = 16_000

    func target(_ url: ForwardURL, text: String, proxy: String?) throws(ForwardTargetProblem) -> ForwardTarget {
        let key = try url.singleKey(or: ForwardTargetProblem { localize in
            localize("feishu:// needs the bot's hook id (the end of its webhook address), such as feishu://HOOK_ID?secret=SECRET")
        })
        let secret = try url.signingSecret()
        return target(PushAddress(base: try url.apiBase("https://open.feishu.cn"), key: key, secret: secret), text: text, proxy: proxy)
    }

    func request(_ content: PushContent, to push: PushAddress, proxy: String?) -> ForwardRequest {
        let text = content.alert.title + "\n" + content.message
        var members = [
            ("msg_type", JSONText.string("text")),
            ("content", JSONText.object([("text", JSONText.string(MessageText.cut(text, bytes: 20_000)))])),
        ]
        if let secret = push.secret, let sign = content.signer {
            let seconds = Int64(content.now)
            members += [("timestamp", JSONText.string("\(seconds)")),
                        ("sign", JSONText.string(MessageText.base64(sign(Array("\(seconds)\n\(secret)".utf8), []))))]
        }
        return post(push.base + "/open-apis/bot/v2/hook/" + push.key, JSONText.object(members),
                    .code(AnswerCodes(service: title, fields: ["code", "StatusCode"], success: 0, words: ["msg", "StatusMessage"],
                                      targetCodes: [19021, 19022, 19024], retryCodes: [11232])),
                    content, push, proxy)
    }
}
