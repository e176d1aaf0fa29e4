import CCRelayCore
import CoreVocabulary
import SrunCodec

/// The values of `srun_portal?action=login`, made from the challenge's
/// token as the portal's script makes them:
///
///     hmd5   = HMAC-MD5(token, password) (or a `SrunSettings.Digest` variant)
///     info   = "{SRBX1}" + SrunBase64(XEncode(JSON{username,password,ip,acid,enc_ver}, token))
///     chksum = SHA-1(token+username+token+hmd5+token+ac_id+token+ip+token+n+token+type+token+info)
///
/// `info` carries the password (the token opens it): the form, and the URL
/// made from it, are never logged (`description` redacts them).
struct SrunLoginForm: CustomStringConvertible {
    static let n = "200"
    static let type = "1"
    static let encoding = "srun_bx1"

    /// The user name with the domain suffix, as sent (and inside `info` and `chksum`).
    let username: String
    let hmd5: String
    let info: String
    let chksum: String
    let ip: String
    let acID: String

    init(username: String, password: String, token: String, ip: String, acID: String, digest: SrunSettings.Digest) {
        let key = Array(token.utf8)
        hmd5 =
            switch digest {
            case .hmac: SrunDigest.hmacMD5Hex(key: key, message: Array(password.utf8))
            case .hmacEmpty: SrunDigest.hmacMD5Hex(key: key, message: [])
            case .md5: SrunDigest.md5Hex(Array(password.utf8))
            }
        // The browser's key order; the values are strings (acid too), as JSON.stringify writes them.
        let json = JSONText.object([
            ("username", JSONText.string(username)), ("password", JSONText.string(password)), ("ip", JSONText.string(ip)),
            ("acid", JSONText.string(acID)), ("enc_ver", JSONText.string(Self.encoding)),
        ])
        info = "{SRBX1}" + SrunBase64.encode(XEncode.encode(Array(json.utf8), key: key))
        chksum = Self.chksum(token: token, username: username, hmd5: hmd5, acID: acID, ip: ip, info: info)
        self.username = username
        self.ip = ip
        self.acID = acID
    }

    static func chksum(token: String, username: String, hmd5: String, acID: String, ip: String, info: String) -> String {
        SrunDigest.sha1Hex(Array([username, hmd5, acID, ip, n, type, info].map { token + $0 }.joined().utf8))
    }

    /// The query's names and values in the portal's order, before `callback` and `_`.
    func parameters(doubleStack: Bool, os: String, platform: String) -> [(name: String, value: String)] {
        [
            ("action", "login"), ("username", username), ("password", "{MD5}" + hmd5), ("ac_id", acID), ("ip", ip), ("chksum", chksum),
            ("info", info), ("n", Self.n), ("type", Self.type), ("os", os), ("name", platform), ("double_stack", doubleStack ? "1" : "0"),
        ]
    }

    var description: String { "SrunLoginForm(username: \(username), ip: \(ip), ac_id: \(acID), hmd5/info/chksum: <redacted>)" }
}
