/// What `get_challenge` issued: the token the login's `hmd5`, `info` and
/// `chksum` are made with, and what the portal says about this computer.
struct SrunChallenge: Sendable, Hashable, CustomStringConvertible {
    /// 64 hex digits. The key of the login's `info`, which carries the
    /// password: never logged (see `description`).
    var token: String
    /// The address the portal sees this computer at, when it gave a valid one.
    var clientIP: String?
    /// Seconds the token stays valid, as the portal counts them (`"60"`, then less on a repeat).
    var expire: Int?
    /// `srun_ver`, such as `SRunCGIAuthIntfSvr V1.18 B20210909`.
    var serverVersion: String?

    var description: String {
        "SrunChallenge(token: <redacted>, clientIP: \(clientIP ?? "none"), expire: \(expire.map(String.init) ?? "none"))"
    }

    /// What a `get_challenge` answer can say.
    enum Answer: Hashable {
        case issued(SrunChallenge)
        case refused(SrunRefusal, words: String)
    }

    /// Reads a `get_challenge` answer, or says why it is not one.
    static func read(_ body: [UInt8], callback: String) -> Result<Answer, SrunAnswer.Problem> {
        SrunAnswer.read(body, callback: callback).flatMap { answer in
            guard answer.error == "ok" else { return .success(.refused(answer.refusal, words: answer.words)) }
            guard let token = answer.text("challenge", limit: 65), token.utf8.count == 64,
                token.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) || (0x41...0x46).contains($0) })
            else { return .failure(SrunAnswer.Problem(text: "the challenge is not 64 hex digits")) }
            return .success(.issued(SrunChallenge(
                token: token, clientIP: answer.address("client_ip") ?? answer.address("online_ip"),
                expire: answer.count("expire", maximum: 86_400).map { Int($0) }, serverVersion: answer.text("srun_ver", limit: 64))))
        }
    }
}
