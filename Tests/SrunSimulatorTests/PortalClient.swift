import CCRelayCore
import CoreVocabulary
import Foundation
import SrunCodec
import TestSupport

/// One HTTP answer as curl saw it.
struct PortalAnswer {
    var status: Int
    /// Header names lowercased.
    var headers: [String: String]
    var body: String

    /// The JSON inside `callback(…)`, which must be the whole body.
    func jsonp(_ callback: String) throws -> [String: Any] {
        guard body.hasPrefix(callback + "("), body.hasSuffix(")") else { throw TestSetupError("not \(callback)(…): \(body)") }
        return try object(String(body.dropFirst(callback.count + 1).dropLast()))
    }

    func json() throws -> [String: Any] { try object(body) }

    private func object(_ text: String) throws -> [String: Any] {
        guard let parsed = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            throw TestSetupError("not a JSON object: \(text)")
        }
        return parsed
    }
}

/// A client of `ccsim --protocol srun` over real HTTP (curl), from a chosen
/// loopback source address: 127.0.0.2, 127.0.0.3… are different devices.
struct PortalClient {
    let sim: CCSimProcess
    var source = "127.0.0.1"
    var callback = "jQuery1124_1700000000000"

    /// GET `path` on the portal with `query` (each value percent-encoded).
    /// `proxiedHost`: ask the simulator as a proxy, for `http://proxiedHost/path`.
    func get(_ path: String, _ query: [(String, String)] = [], proxiedHost: String? = nil, extra: [String] = []) throws -> PortalAnswer {
        let queryText = query.map { PercentEncoding.encode($0.0) + "=" + PercentEncoding.encode($0.1) }.joined(separator: "&")
        let suffix = path + (query.isEmpty ? "" : "?" + queryText)
        let routing = proxiedHost.map { ["--proxy", String(sim.url.dropLast()), "http://\($0)" + suffix] }
            ?? ["--noproxy", "*", String(sim.url.dropLast()) + suffix]
        let result = try run("/usr/bin/curl", ["-sS", "-i", "--max-time", "30", "--interface", source] + extra + routing)
        guard result.status == 0 else { throw TestSetupError("curl: \(result.standardError)") }
        return try Self.parse(result.standardOutput)
    }

    /// The CGI answer to `path` with our callback, as JSON.
    func cgi(_ path: String, _ query: [(String, String)]) throws -> [String: Any] {
        try get(path, [("callback", callback)] + query + [("_", "1700000000000")]).jsonp(callback)
    }

    func challenge(_ username: String, ip: String = "") throws -> [String: Any] {
        try cgi("/cgi-bin/get_challenge", [("username", username), ("ip", ip)])
    }

    func status() throws -> [String: Any] { try cgi("/cgi-bin/rad_user_info", []) }

    /// A fresh challenge, then `action=login` built as the portal's script does.
    func login(_ username: String, _ password: String, acID: String = "1", change: (inout SrunLoginForm) -> Void = { _ in })
        throws -> [String: Any]
    {
        guard let token = try challenge(username)["challenge"] as? String else { throw TestSetupError("no challenge") }
        var form = SrunLoginForm(token: token, username: username, password: password, ip: source, acID: acID)
        change(&form)
        return try cgi("/cgi-bin/srun_portal", form.query)
    }

    func logout(_ username: String) throws -> [String: Any] {
        try cgi("/cgi-bin/srun_portal", [("action", "logout"), ("username", username), ("ac_id", "1"), ("ip", source)])
    }

    static func parse(_ output: String) throws -> PortalAnswer {
        // A proxy's or a 100-continue's head may come first: the last head before the body counts.
        var rest = Substring(output)
        var head = Substring("")
        repeat {
            guard let end = rest.range(of: "\r\n\r\n") else { throw TestSetupError("no HTTP head: \(output)") }
            head = rest[..<end.lowerBound]
            rest = rest[end.upperBound...]
        } while rest.hasPrefix("HTTP/")
        let lines = head.components(separatedBy: "\r\n")
        guard let status = lines.first?.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else {
            throw TestSetupError("no status: \(output)")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return PortalAnswer(status: status, headers: headers, body: String(rest))
    }
}

/// A login request as the portal's script builds it (§2.3), every part changeable.
struct SrunLoginForm {
    var token: String
    var username: String
    var password: String
    var ip: String
    var acID: String
    /// `acid` in info as a number (as zu1k sends it), not a string.
    var acidAsNumber = false
    var infoUsername: String?
    /// nil: HMAC-MD5(token, password), as the portal's script.
    var hmd5: String?
    /// Replaces the computed info.
    var info: String?
    /// Appended to the computed chksum (BitSrunLoginGo sends a newline).
    var chksumSuffix = ""
    var chksum: String?
    var leaveOut: Set<String> = []

    var computedHMD5: String { hmd5 ?? SrunDigest.hmacMD5Hex(key: Array(token.utf8), message: Array(password.utf8)) }

    /// The browser's key order: username, password, ip, acid, enc_ver.
    var infoJSON: String {
        let acid = acidAsNumber ? acID : "\"\(acID)\""
        return #"{"username":"\#(infoUsername ?? username)","password":"\#(password)","ip":"\#(ip)","acid":\#(acid),"enc_ver":"srun_bx1"}"#
    }

    var computedInfo: String { info ?? "{SRBX1}" + SrunBase64.encode(XEncode.encode(Array(infoJSON.utf8), key: Array(token.utf8))) }

    var computedChksum: String {
        let parts = [username, computedHMD5, acID, ip, "200", "1", computedInfo]
        return (chksum ?? SrunDigest.sha1Hex(Array(parts.map { token + $0 }.joined().utf8))) + chksumSuffix
    }

    var query: [(String, String)] {
        [
            ("action", "login"), ("username", username), ("password", "{MD5}" + computedHMD5), ("ac_id", acID), ("ip", ip),
            ("chksum", computedChksum), ("info", computedInfo), ("n", "200"), ("type", "1"), ("os", "Linux"), ("name", "Linux"),
            ("double_stack", "0"),
        ].filter { !leaveOut.contains($0.0) }
    }
}

/// rad_user_dm's sign with unbind=1: SHA-1(time + username + ip + unbind + time).
func dmSign(time: String, username: String, ip: String) -> String {
    SrunDigest.sha1Hex(Array((time + username + ip + "1" + time).utf8))
}
