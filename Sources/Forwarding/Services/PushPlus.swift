import CoreVocabulary

/// PushPlus (`pushplus://TOKEN`): `POST /send` JSON `token`, `title`,
/// `content`, `template` txt; answers `code` 200, else `msg` (900 and 903:
/// the token; 500 and 999: try again).
struct PushPlus: KeyedPushService {
    let name = "pushplus"
    let title = "PushPlus"
    let schemes = ["pushplus"]
    let options: Set<String> = ["api"]
    let messageRoom = 16_000

    func target(_ url: ForwardURL, text: String, proxy: String?) throws(ForwardTargetProblem) -> ForwardTarget {
        let key = try url.singleKey(or: ForwardTargetProblem { localize in localize("pushplus:// needs the token from pushplus.plus, such as pushplus://TOKEN") })
        return target(PushAddress(base: try url.apiBase("https://www.pushplus.plus"), key: key), text: text, proxy: proxy)
    }

    func request(_ content: PushContent, to push: PushAddress, proxy: String?) -> ForwardRequest {
        post(push.base + "/send", JSONText.object([
            ("token", JSONText.string(push.key)), ("title", JSONText.string(content.alert.title)),
            ("content", JSONText.string(content.message)), ("template", JSONText.string("txt")),
        ]), .code(AnswerCodes(service: title, fields: ["code"], success: 200, words: ["msg"], targetCodes: [900, 903], retryCodes: [500, 999])),
            content, push, proxy)
    }
}
