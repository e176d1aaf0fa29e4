import FoundationEssentials
import Synchronization
import CoreVocabulary

/// The CC/1 server the simulator plays: sessions, server-side expiry, and
/// the faults the control API injects. Thread-safe: all state is behind `state`.
final class Simulator: Sendable {
    struct Settings: Sendable {
        var interval: Int
        var timeout: Int
        var location: String
        var requireClientCertificate: Bool
        var users: [String: String]
    }

    struct Report: Sendable, Encodable {
        var seq: UInt64
        var location: Location?
        var at: Double
        var accepted: Bool
    }

    struct Location: Codable, Sendable {
        var lat: Double
        var lon: Double
        var accuracy: Double
        var timestamp: String
    }

    struct Notice: Codable, Sendable {
        var id: String
        var title: String
        var body: String
        var urgency: String?
    }

    struct Session: Sendable {
        var token: String
        var ip: String
        var device: String
        var user: String?
        var certificate: String?
        var userAgent: String?
        var createdAt: Double
        var lastAccepted: ContinuousClock.Instant
        var interval: Int
        var timeout: Int
        var endedReason: String?
        var endedMessage: String?
        var reports: [Report] = []
    }

    /// An injected fault: which endpoint, what happens, how many times.
    struct Fault: Sendable, Decodable {
        enum Kind: String, Sendable, Decodable {
            case status, rateLimit = "rate-limit", hang, slow, garbage, oversized, reset
            /// Exactly `body` with `status` (default 200) and, when given, a
            /// `Retry-After: retry_after_header`: hostile replies of any shape.
            case raw
        }
        var endpoint: String
        var kind: Kind
        var status: Int?
        var retryAfter: Int?
        var delayMs: Int?
        var count: Int?
        var body: String?
        var retryAfterHeader: String?

        enum CodingKeys: String, CodingKey {
            case endpoint, kind, status, count, body
            case retryAfter = "retry_after"
            case delayMs = "delay_ms"
            case retryAfterHeader = "retry_after_header"
        }
    }

    struct LoginRefusal: Sendable, Decodable {
        var status: Int
        var error: String
        var message: String?
    }

    struct State: Sendable {
        var settings: Settings
        var sessions: [String: Session] = [:]
        var notices: [Notice] = []
        var faults: [Fault] = []
        var loginRefusal: LoginRefusal?
    }

    let state: Mutex<State>
    let clock = ContinuousClock()

    init(settings: Settings) { state = Mutex(State(settings: settings)) }

    // MARK: CC/1

    func handle(_ request: HTTPRequest) -> HTTPReply {
        let endpoint: String
        switch (request.method, request.path) {
        case ("POST", "/cc/v1/session"): endpoint = "login"
        case ("POST", "/cc/v1/session/keepalive"): endpoint = "keepalive"
        case ("DELETE", "/cc/v1/session"): endpoint = "logout"
        default: return json(404, ["error": "not_found", "message": "no such CC/1 endpoint"])
        }
        if request.bodyTooLarge { return json(413, ["error": "too_large", "message": "request body over 64 KiB"]) }
        let fault = takeFault(for: endpoint)
        if let fault {
            switch fault.kind {
            case .status:
                let status = fault.status ?? 503
                return json(status, ["error": "injected", "message": "injected status \(status)"])
            case .rateLimit:
                let seconds = fault.retryAfter ?? 1
                return .respond(
                    status: 429, headers: [("Content-Type", "application/json"), ("Retry-After", String(seconds))],
                    body: Array(#"{"error":"rate_limited","message":"slow down","retry_after":\#(seconds)}"#.utf8))
            case .hang: return .hang
            case .reset: return .reset
            case .garbage:
                return .respond(status: 200, headers: [("Content-Type", "application/json")], body: Array("{not json at all".utf8))
            case .oversized:
                let filler = String(repeating: "x", count: 100 * 1024)
                return .respond(status: 200, headers: [("Content-Type", "application/json")],
                                body: Array(#"{"status":"online","padding":"\#(filler)"}"#.utf8))
            case .raw:
                let headers = [("Content-Type", "application/json")] + (fault.retryAfterHeader.map { [("Retry-After", $0)] } ?? [])
                return .respond(status: UInt32(clamping: fault.status ?? 200), headers: headers, body: Array((fault.body ?? "").utf8))
            case .slow: break
            }
        }
        let reply: HTTPReply
        switch endpoint {
        case "login": reply = login(request)
        case "keepalive": reply = keepAlive(request)
        default: reply = logout(request)
        }
        if let fault, fault.kind == .slow, case .respond(let status, let headers, let body) = reply {
            return .delayed(milliseconds: fault.delayMs ?? 2000, status: status, headers: headers, body: body)
        }
        return reply
    }

    private func takeFault(for endpoint: String) -> Fault? {
        state.withLock { state in
            guard let index = state.faults.firstIndex(where: { $0.endpoint == endpoint || $0.endpoint == "any" }) else {
                return nil
            }
            let fault = state.faults[index]
            if let count = fault.count {
                if count <= 1 { state.faults.remove(at: index) } else { state.faults[index].count = count - 1 }
            }
            return fault
        }
    }

    private struct LoginBody: Decodable {
        var device: String?
        var user: String?
        var password: String?
    }

    private func login(_ request: HTTPRequest) -> HTTPReply {
        guard let body = try? JSONDecoder().decode(LoginBody.self, from: Data(request.body)) else {
            return json(400, ["error": "bad_request", "message": "the login body is not JSON"])
        }
        return state.withLock { state -> HTTPReply in
            var certificateName: String?
            switch request.clientCertificate {
            case .verified(let commonName): certificateName = commonName
            case .rejected(let expired, _):
                if state.settings.requireClientCertificate {
                    return json(401, ["error": "certificate_rejected",
                                      "message": expired ? "client certificate expired" : "client certificate not issued by the campus CA"])
                }
            case .none, .plainConnection:
                if state.settings.requireClientCertificate && body.user == nil {
                    return json(401, ["error": "certificate_rejected", "message": "no client certificate presented"])
                }
            }
            if let refusal = state.loginRefusal {
                return json(refusal.status, ["error": refusal.error, "message": refusal.message ?? refusal.error])
            }
            if let user = body.user {
                guard let password = body.password, state.settings.users[user] == password else {
                    return json(401, ["error": "bad_credentials", "message": "用户名或密码错误"])
                }
            }
            let token = Self.newToken()
            state.sessions[token] = Session(
                token: token, ip: request.peer, device: body.device ?? "", user: body.user, certificate: certificateName, userAgent: request.userAgent,
                createdAt: Self.wallClock(), lastAccepted: clock.now, interval: state.settings.interval,
                timeout: state.settings.timeout)
            return encodeReply(201, LoginReply(
                session: token, ip: request.peer, interval: state.settings.interval, timeout: state.settings.timeout,
                location: state.settings.location, notices: state.notices))
        }
    }

    private struct LoginReply: Encodable {
        var session: String
        var ip: String
        var interval: Int
        var timeout: Int
        var location: String
        var notices: [Notice]
    }

    private struct KeepAliveBody: Decodable {
        var seq: UInt64
        var location: Location?
    }

    private struct KeepAliveReply: Encodable {
        var status = "online"
        var interval: Int
        var timeout: Int
        var notices: [Notice]
    }

    private func token(of request: HTTPRequest) -> String? {
        guard let header = request.authorization, header.hasPrefix("CC-Session ") else { return nil }
        return String(header.dropFirst("CC-Session ".count))
    }

    private func keepAlive(_ request: HTTPRequest) -> HTTPReply {
        guard let body = try? JSONDecoder().decode(KeepAliveBody.self, from: Data(request.body)) else {
            return json(400, ["error": "bad_request", "message": "the keep-alive body is not JSON with a seq"])
        }
        return state.withLock { state -> HTTPReply in
            guard let token = token(of: request), var session = state.sessions[token] else {
                return json(401, ["status": "logged_out", "reason": "unknown_session", "message": "no such session"])
            }
            defer { state.sessions[token] = session }
            if session.endedReason == nil, clock.now > session.lastAccepted + .seconds(session.timeout) {
                session.endedReason = "expired"
                session.endedMessage = "登录已超时"
            }
            if let reason = session.endedReason {
                session.reports.append(Report(seq: body.seq, location: body.location, at: Self.wallClock(), accepted: false))
                return json(410, ["status": "logged_out", "reason": reason, "message": session.endedMessage ?? reason])
            }
            if state.settings.location == "required" && body.location == nil {
                session.reports.append(Report(seq: body.seq, location: nil, at: Self.wallClock(), accepted: false))
                return json(428, ["error": "location_required", "message": "请开启定位服务"])
            }
            session.reports.append(Report(seq: body.seq, location: body.location, at: Self.wallClock(), accepted: true))
            session.lastAccepted = clock.now
            session.interval = state.settings.interval
            session.timeout = state.settings.timeout
            return encodeReply(200, KeepAliveReply(interval: session.interval, timeout: session.timeout, notices: state.notices))
        }
    }

    private func logout(_ request: HTTPRequest) -> HTTPReply {
        state.withLock { state -> HTTPReply in
            guard let token = token(of: request), var session = state.sessions[token], session.endedReason == nil else {
                return json(410, ["status": "logged_out", "reason": "unknown_session", "message": "no such session"])
            }
            session.endedReason = "logout"
            state.sessions[token] = session
            return .respond(status: 204, headers: [], body: [])
        }
    }

    // MARK: Helpers

    static func newToken() -> String {
        (0..<4).map { _ in String(UInt64.random(in: .min ... .max), radix: 16) }.joined(separator: "-")
    }

    static func wallClock() -> Double { Date().timeIntervalSince1970 }
}

func json(_ status: Int, _ fields: [String: String]) -> HTTPReply {
    encodeReply(status, fields)
}

func encodeReply<T: Encodable>(_ status: Int, _ value: T) -> HTTPReply {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    let body = (try? encoder.encode(value)).map(Array.init) ?? Array("{}".utf8)
    return .respond(status: UInt32(status), headers: [("Content-Type", "application/json")], body: body)
}
