import CoreVocabulary

/// A DingTalk robot (`dingtalk://TOKEN[?secret=SECRET]`): `POST
/// /robot/send?access_token=TOKEN[&timestamp=MS&sign=SIGN]` JSON `msgtype`
/// text, `text.content`; SIGN = URL-encoded base64(HMAC-SHA256(secret,
/// "MS\nsecret")); answers `errcode` 0, else `errmsg`.
struct DingTalk: KeyedPushService {
    let name = "dingtalk"
    let title = "DingTalk"
    let schemes = ["dingtalk"]
    let options: Set<String> = ["api", "secret"]
    let messageRoom = 16_000

    func target(_ url: ForwardURL, text: String, proxy: String?) throws(ForwardTargetProblem) -> ForwardTarget {
        let key = try url.singleKey(or: ForwardTargetProblem { localize in
            localize("dingtalk:// needs the robot's access_token, such as dingtalk://TOKEN?secret=SEC…")
        })
        let secret = try url.signingSecret()
        return target(PushAddress(base: try url.apiBase("https://oapi.dingtalk.com"), key: key, secret: secret), text: text, proxy: proxy)
    }

    func request(_ content: PushContent, to push: PushAddress, proxy: String?) -> ForwardRequest {
        var url = push.base + "/robot/send?access_token=" + push.key
        if let secret = push.secret, let sign = content.signer {
            let milliseconds = Int64(content.now * 1000)
            let signature = MessageText.base64(sign(Array(secret.utf8), Array("\(milliseconds)\n\(secret)".utf8)))
            url += "&timestamp=\(milliseconds)&sign=" + PercentEncoding.encode(signature)
        }
        let text = content.alert.title + "\n" + content.message
        return post(url, JSONText.object([
            ("msgtype", JSONText.string("text")),
            ("text", JSONText.object([("content", JSONText.string(MessageText.cut(text, bytes: 20_000)))])),
        ]), .code(AnswerCodes(service: title, fields: ["errcode"], success: 0, words: ["errmsg"], targetCodes: [300001, 300005, 310000],
                              retryCodes: [-1, 130101, 410100])),
            content, push, proxy)
    }
}
