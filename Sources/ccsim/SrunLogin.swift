import FoundationEssentials
import SrunCodec
import CoreVocabulary

/// `action=login`, judged in the order of ccsim --help ("Login checks run in this order").
extension SrunState {
    static let loginParameters = ["username", "password", "ac_id", "chksum", "info", "n", "type"]

    /// The decoded `info`: its password, and what it says of username and ac_id.
    private struct Info: Decodable {
        var username: String
        var password: String
        var ip: String
        var acid: SrunValue
        var encryption: String

        enum CodingKeys: String, CodingKey {
            case username, password, ip, acid
            case encryption = "enc_ver"
        }
    }

    mutating func login(_ request: SrunRequest, now: ContinuousClock.Instant, time: Int) -> SrunFields {
        var value: [String: String] = [:]
        for name in Self.loginParameters {
            guard let given = request[name], !given.isEmpty else { return SrunReply.failure("missing_required_parameters_error") }
            value[name] = given
        }
        if let scripted = scriptedLogins.first {
            if let count = scripted.count, count > 1 { scriptedLogins[0].count = count - 1 } else { scriptedLogins.removeFirst() }
            return scripted.fields
        }
        if captcha { return SrunReply.failure("captcha_error", message: "Captcha is required: log in from a browser.") }
        let username = value["username"] ?? ""
        let ip = request["ip"] ?? ""
        let key = request.peer + " " + username
        guard let challenge = challenges[key], now < challenge.issued + Self.challengeLifetime else {
            return SrunReply.failure("challenge_expire_error")
        }
        let token = challenge.token
        let password = value["password"] ?? ""
        let hmd5 = password.hasPrefix("{MD5}") ? String(password.dropFirst(5)) : password
        let acID = value["ac_id"] ?? ""
        let info = value["info"] ?? ""
        let signed = [username, hmd5, acID, ip, value["n"] ?? "", value["type"] ?? "", info].map { token + $0 }.joined()
        let received = String((value["chksum"] ?? "").reversed().drop { $0.isWhitespace }.reversed())
        guard received == SrunDigest.sha1Hex(Array(signed.utf8)) else { return SrunReply.failure("sign_error") }

        let decoded: Info
        switch Self.decode(info: info, token: token) {
        case .success(let info): decoded = info
        case .failure(let code): return SrunReply.loginError("INFO Error,err_code=\(code.rawValue)")
        }
        guard decoded.username == username else { return SrunReply.loginError("INFO Error,err_code=4") }
        if options.strictHMD5, hmd5 != SrunDigest.hmacMD5Hex(key: Array(token.utf8), message: Array(decoded.password.utf8)) {
            return SrunReply.failure("sign_error", message: "strict-hmd5: {MD5} is not HMAC-MD5(token, password)")
        }
        guard acID == String(options.acID), decoded.acid.plain == String(options.acID) else {
            return SrunReply.loginError("INFO failed, BAS respond timeout.")
        }
        guard let expected = users[username] else { return SrunReply.loginError(ecode: "E2531", SrunReply.message(for: "E2531")) }
        if let last = lastAttempt[username], now < last + Self.loginInterval {
            return SrunReply.loginError(ecode: "E2532", SrunReply.message(for: "E2532"))
        }
        rememberAttempt(of: username, at: now)
        guard decoded.password == expected else { return SrunReply.loginError(ecode: "E2553", SrunReply.message(for: "E2553")) }
        if let here = session(at: request.peer) {
            challenges[key] = nil
            return granted(here, username: username, message: "ip_already_online_error")
        }
        let full = SrunReply.loginError(ecode: "E2620", SrunReply.message(for: "E2620"))
        if sessions(of: username).contains(where: { $0.kind == .stale }) { return full }
        guard makeRoom(for: username) else { return full }
        challenges[key] = nil
        let session = add(
            account: username, ip: request.peer, kind: .login, deviceClass: request["name"] ?? "", os: request["os"] ?? "", mac: "",
            since: time)
        return granted(session, username: username, message: "login_ok")
    }

    /// The success answer (§2.3's field set).
    private func granted(_ session: SrunSession, username: String, message: String) -> SrunFields {
        [
            "ServerFlag": 0, "ServicesIntfServerIP": "127.0.0.1", "ServicesIntfServerPort": "8001",
            "access_token": .text(session.accessToken), "checkout_date": 0, "ecode": 0, "error": "ok", "error_msg": "",
            "ploy_msg": "E0000: Login is successful.", "real_name": "", "remain_flux": 0, "remain_times": 0, "res": "ok",
            "suc_msg": .text(message), "sysver": .text(SrunReply.systemVersion), "username": .text(username),
        ]
    }

    private mutating func rememberAttempt(of username: String, at now: ContinuousClock.Instant) {
        if lastAttempt.count >= Self.tableLimit {
            lastAttempt = lastAttempt.filter { now < $0.value + Self.loginInterval }
        }
        lastAttempt[username] = now
    }

    /// Why `info` could not be read: the number after `err_code=`.
    private enum InfoError: Int, Error {
        case notBase64 = 1, notXEncoded, notJSON
    }

    private static func decode(info: String, token: String) -> Result<Info, InfoError> {
        guard info.hasPrefix("{SRBX1}"), let bytes = SrunBase64.decode(String(info.dropFirst(7))) else {
            return .failure(.notBase64)
        }
        guard let plain = XEncode.decode(bytes, key: Array(token.utf8)) else { return .failure(.notXEncoded) }
        guard let parsed = try? JSONDecoder().decode(Info.self, from: Data(plain)) else { return .failure(.notJSON) }
        if case .number = parsed.acid { return .failure(.notJSON) }
        return .success(parsed)
    }
}

/// `get_challenge`.
extension SrunState {
    mutating func challengeAnswer(_ request: SrunRequest, now: ContinuousClock.Instant) -> (fields: SrunFields, delayMilliseconds: Int) {
        guard let username = request["username"], !username.isEmpty else {
            return (SrunReply.failure("missing_required_parameters_error"), 0)
        }
        let (token, left) = challenge(ip: request.peer, username: username, now: now)
        var delay = 0
        if let slow = slowChallenge {
            delay = slow.seconds * 1000
            if let count = slow.count { slowChallenge = count > 1 ? SrunSlowChallenge(seconds: slow.seconds, count: count - 1) : nil }
        }
        let fields: SrunFields = [
            "challenge": .text(token), "ecode": 0, "error": "ok", "error_msg": "", "expire": .text(String(left)), "res": "ok",
        ]
        return (fields, delay)
    }
}
