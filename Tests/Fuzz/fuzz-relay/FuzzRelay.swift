import Forwarding

// libFuzzer target: what forwarding reads from outside — a push service's
// answer (judged by every rule, read by the core's own JSON scanner) and a
// `forward = URL` line. Any bytes give a verdict or a problem, never a trap,
// and a target parsed from a URL never shows its key in its names.

/// The one-input entry libFuzzer's own main looks for; the target's main.swift runs the loop with it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRelay(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let rules: [AnswerRule] = [
        .status, .okFlag(service: "Telegram", targetWords: ["chat not found"]),
        .code(AnswerCodes(service: "ServerChan", fields: ["code"], success: 0, words: ["message", "info"], targetCodes: [40001])),
        .code(AnswerCodes(service: "Feishu", fields: ["code", "StatusCode"], success: 0, words: ["msg", "StatusMessage"])),
    ]
    for rule in rules {
        for status in [200, 400] {
            let judged = rule.judge(status: status, body: text)
            precondition(judged.failure != nil || (200..<300).contains(status), "a 4xx is never a delivery")
        }
    }
    // (A short key may be a word of the name itself, "bark"; a key inside the host name is the user's own doing.)
    if let target = try? ForwardTarget(forward: text), let push = target.push, push.key.count >= 12, !push.host.contains(push.key) {
        precondition(!target.name.contains(push.key) && !target.displayName.contains(push.key), "a key in a name")
    }
    return 0
}
