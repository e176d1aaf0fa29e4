import CoreVocabulary

/// Bark (`bark://DEVICE_KEY`, `barks://HOST[:PORT]/DEVICE_KEY`; the key
/// alone is the public server over https, a server with `bark://` plain
/// http as Apprise reads it): `POST /push` JSON `device_key`, `title`,
/// `body` (cut to 3,000 bytes: APNs takes 4 KiB in all, beyond it Bark
/// answers PayloadTooLarge), `level` (critical, timeSensitive, passive by
/// urgency), `group` ccrelay; answers `code` 200, else `message` — a device
/// key it does not know refuses the target.
struct Bark: KeyedPushService {
    let name = "bark"
    let title = "Bark"
    let schemes = ["bark", "barks"]
    let options: Set<String> = ["api"]
    let messageRoom = 3000

    func target(_ url: ForwardURL, text: String, proxy: String?) throws(ForwardTargetProblem) -> ForwardTarget {
        guard (1...2).contains(url.segments.count), let key = url.segments.last, ForwardURL.isKey(key) else {
            throw ForwardTargetProblem { localize in
                localize("bark:// needs the device key from the Bark app, such as bark://DEVICE_KEY or barks://bark.campus.example/DEVICE_KEY")
            }
        }
        // The key alone: the public server, over https (ccrelay's shorthand).
        var server = "https://api.day.app"
        if url.segments.count == 2 {
            // A server is a name with a dot, an address or localhost: `bark://KEY/extra` is a key with something after it.
            let named = url.segments[0]
            let host = TargetURL.host(of: named).lowercased()
            guard TargetURL("https://" + named).map({ !$0.authority.contains("@") }) == true,
                host.contains(".") || host.hasPrefix("[") || host == "localhost"
            else {
                throw ForwardTargetProblem { localize in
                    localize("bark:// takes the device key alone (bark://DEVICE_KEY) or a server first (barks://HOST[:PORT]/DEVICE_KEY, the server a name with a dot, an address or localhost)")
                }
            }
            // As Apprise reads it: bark:// with a server is plain http, barks:// https.
            guard let parsed = TargetURL((url.scheme == "barks" ? "https://" : "http://") + named) else {
                throw ForwardTargetProblem { localize in
                    TextTemplate.fill(
                        localize("bark:// with a server is plain http, as Apprise reads it, which goes only to a loopback address: use barks://%s/DEVICE_KEY for https"),
                        host)
                }
            }
            server = parsed.scheme + "://" + parsed.authority
        }
        return target(PushAddress(base: try url.apiBase(server), key: key), text: text, proxy: proxy)
    }

    func request(_ content: PushContent, to push: PushAddress, proxy: String?) -> ForwardRequest {
        let level =
            switch content.alert.urgency {
            case .critical: "critical"
            case .normal: "timeSensitive"
            case .low: "passive"
            }
        return post(push.base + "/push", JSONText.object([
            ("device_key", JSONText.string(push.key)), ("title", JSONText.string(MessageText.cut(content.alert.title, bytes: 200))),
            ("body", JSONText.string(MessageText.cut(content.message, bytes: 3000))), ("level", JSONText.string(level)),
            ("group", JSONText.string("ccrelay")),
        ]), .code(AnswerCodes(service: title, fields: ["code"], success: 200, words: ["message"], targetWords: ["device token", "device key"])),
            content, push, proxy)
    }
}
