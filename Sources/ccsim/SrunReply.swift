import FoundationEssentials

/// A JSON scalar of a Srun answer: the real server mixes numbers and numbers-as-strings.
enum SrunValue: Sendable, Codable, Equatable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
    case text(String)
    case integer(Int)
    case number(Double)

    init(stringLiteral value: String) { self = .text(value) }
    init(integerLiteral value: Int) { self = .integer(value) }

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Int.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else {
            self = .text(try container.decode(String.self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .text(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        }
    }

    /// The value as the legacy comma list writes it.
    var plain: String {
        switch self {
        case .text(let value): value
        case .integer(let value): String(value)
        case .number(let value): String(value)
        }
    }
}

/// One answer's fields (sent with sorted keys, as Srun's Go-built server does).
typealias SrunFields = [String: SrunValue]

/// How the portal writes its answers: JSONP, plain JSON, and the failure shapes.
enum SrunReply {
    static let serverVersion = "SRunCGIAuthIntfSvr V1.18 B20210909"
    static let systemVersion = "1.01.20210607"

    /// `fields` with what every answer carries (client_ip, online_ip, error_msg,
    /// srun_ver, st), as `CALLBACK(json)` when the request names a callback, else as JSON.
    static func answer(_ request: SrunRequest, _ fields: SrunFields, delayMilliseconds: Int = 0) -> HTTPReply {
        var all = fields
        all["client_ip"] = .text(request.peer)
        all["online_ip"] = all["online_ip"] ?? .text(request.peer)
        all["error_msg"] = all["error_msg"] ?? ""
        all["srun_ver"] = .text(serverVersion)
        all["st"] = .integer(Int(Date().timeIntervalSince1970))
        let json = compactJSON(all)
        let callback = request["callback"].flatMap { $0.isEmpty ? nil : $0 }
        let body = callback.map { "\($0)(\(json))" } ?? json
        let type = callback == nil ? "application/json" : "application/javascript"
        return text(200, body, type: type, delayMilliseconds: delayMilliseconds)
    }

    /// A refusal whose `error` and `res` are both `word`.
    static func failure(_ word: String, ecode: String = "", message: String = "") -> SrunFields {
        ["error": .text(word), "res": .text(word), "ecode": .text(ecode), "error_msg": .text(message)]
    }

    /// A refused login (`error` = `res` = `login_error`).
    static func loginError(ecode: String = "", _ message: String) -> SrunFields {
        failure("login_error", ecode: ecode, message: message)
    }

    /// The words this simulator uses for the E-codes it sends (or is told to send).
    static func message(for ecode: String) -> String {
        let text = [
            "E2531": "User not found.",
            "E2532": "The two authentication interval cannot be less than 3 seconds.",
            "E2553": "Password is error.",
            "E2606": "User is disabled.",
            "E2616": "Arrearage users.",
            "E2620": "You are already online.",
            "E2901": "(Third party 1)bind_user2: ldap_bind error",
            "E3001": "Flux or time is used up.",
            "E3004": "Balance is insufficient.",
        ][ecode]
        return text.map { "\(ecode): \($0)" } ?? ecode
    }

    /// Sorted keys, no spaces, `/` unescaped.
    static func compactJSON<T: Encodable>(_ value: T) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    static func text(_ status: UInt32, _ body: String, type: String = "text/html; charset=utf-8", headers: [(String, String)] = [],
                     delayMilliseconds: Int = 0) -> HTTPReply {
        let all = [("Content-Type", type)] + headers
        if delayMilliseconds > 0 {
            return .delayed(milliseconds: delayMilliseconds, status: status, headers: all, body: Array(body.utf8))
        }
        return .respond(status: status, headers: all, body: Array(body.utf8))
    }

    /// 64 lowercase hex characters (a challenge or an access token).
    static func newToken() -> String {
        (0..<4).map { _ in
            let hex = String(UInt64.random(in: .min ... .max), radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }
}
