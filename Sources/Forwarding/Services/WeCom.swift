import CoreVocabulary

/// A WeCom group bot (`wecombot://KEY`): `POST
/// /cgi-bin/webhook/send?key=KEY` JSON `msgtype` text, `text.content` (at
/// most 2,048 bytes); answers `errcode` 0, else `errmsg`.
struct WeCom: KeyedPushService {
    let name = "wecom"
    let title = "WeCom"
    let schemes = ["wecombot"]
    let options: Set<String> = ["api"]
    let messageRoom = 2000

    func target(_ url: ForwardURL, text: String, proxy: String?) throws(ForwardTargetProblem) -> ForwardTarget {
        let key = try url.singleKey(or: ForwardTargetProblem { localize in
            localize("wecombot:// needs the group bot's key (the key= of its webhook address), such as wecombot://KEY")
        })
        return target(PushAddress(base: try url.apiBase("https://qyapi.weixin.qq.com"), key: key), text: text, proxy: proxy)
    }

    func request(_ content: PushContent, to push: PushAddress, proxy: String?) -> ForwardRequest {
        let text = content.alert.title + "\n" + content.message
        return post(push.base + "/cgi-bin/webhook/send?key=" + push.key, JSONText.object([
            ("msgtype", JSONText.string("text")),
            ("text", JSONText.object([("content", JSONText.string(MessageText.cut(text, bytes: 2048)))])),
        ]), .code(AnswerCodes(service: title, fields: ["errcode"], success: 0, words: ["errmsg"], targetCodes: [93000, 93004, 40014],
                              retryCodes: [-1, 45009])),
            content, push, proxy)
    }
}
