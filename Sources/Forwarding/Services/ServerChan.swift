import CoreVocabulary

/// ServerChan (`schan://SENDKEY`; a `sctp{uid}t…` key is Server³, whose
/// server is `{uid}.push.ft07.com`): `POST /SENDKEY.send` (Server³:
/// `/send/SENDKEY.send`) JSON `title` (at most 32 characters, counted in
/// UTF-16), `desp`; answers `code` 0, else `message`. 40001 is a SendKey it
/// does not know or the day's quota used up: either way the queue waits.
/// The free plan takes 5 messages a day: its budget unless `limit=` says.
struct ServerChan: KeyedPushService {
    let name = "serverchan"
    let title = "ServerChan"
    let schemes = ["schan"]
    let options: Set<String> = ["api"]
    let messageRoom = 16_000
    let defaultBudget: ForwardBudget? = ForwardBudget(count: 5, window: 86_400)

    func target(_ url: ForwardURL, text: String, proxy: String?) throws(ForwardTargetProblem) -> ForwardTarget {
        let key = try url.singleKey(or: ForwardTargetProblem { localize in
            localize("schan:// needs the SendKey from sct.ftqq.com, such as schan://SCT123456TxxxxxxxxxxxxxxxxxxxX")
        })
        let lower = key.lowercased()
        let uid = lower.hasPrefix("sctp") ? lower.dropFirst(4).prefix { $0.isNumber } : ""
        let server = uid.isEmpty ? "https://sctapi.ftqq.com" : "https://\(uid).push.ft07.com"
        return target(PushAddress(base: try url.apiBase(server), key: key), text: text, proxy: proxy)
    }

    func request(_ content: PushContent, to push: PushAddress, proxy: String?) -> ForwardRequest {
        let path = push.base.hasSuffix(".push.ft07.com") ? "/send/" : "/"
        return post(push.base + path + push.key + ".send", JSONText.object([
            ("title", JSONText.string(MessageText.cut(content.alert.title, utf16: 32))),
            ("desp", JSONText.string(MessageText.cut(content.message, bytes: 30_000))),
        ]), .code(AnswerCodes(service: title, fields: ["code"], success: 0, words: ["message", "info"], targetCodes: [40001])),
            content, push, proxy)
    }
}
