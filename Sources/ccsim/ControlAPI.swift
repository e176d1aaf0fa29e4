import FoundationEssentials

/// The simulator's loopback-only control API (plain HTTP, JSON): scripts a
/// scenario and reads back what each session sent. See `ccsim --help`.
struct ControlAPI: Sendable {
    let simulator: Simulator
    /// The CC/1 listener, for connection counts.
    let server: @Sendable () -> HTTPServer?

    func handle(_ request: HTTPRequest) -> HTTPReply {
        let decoder = JSONDecoder()
        let data = Data(request.body)
        switch (request.method, request.path) {
        case ("GET", "/control/sessions"):
            let now = simulator.clock.now
            return encodeReply(200, simulator.state.withLock { state in
                state.sessions.values.sorted { $0.createdAt < $1.createdAt }.map {
                    SessionView($0, expired: now > $0.lastAccepted + .seconds($0.timeout))
                }
            })
        case ("GET", "/control/stats"):
            let listener = server()
            return encodeReply(200, [
                "connections": listener?.connectionsAccepted.load(ordering: .relaxed) ?? 0,
                "requests": listener?.requestsHandled.load(ordering: .relaxed) ?? 0,
            ])
        case ("POST", "/control/kick"), ("POST", "/control/expire"):
            struct Target: Decodable { var session: String?; var reason: String?; var message: String? }
            let target = (try? decoder.decode(Target.self, from: data)) ?? Target()
            let expire = request.path.hasSuffix("expire")
            let count = simulator.state.withLock { state in
                var count = 0
                for (token, session) in state.sessions where session.endedReason == nil && (target.session == nil || target.session == token) {
                    state.sessions[token]?.endedReason = expire ? "expired" : (target.reason ?? "kicked")
                    state.sessions[token]?.endedMessage = target.message ?? (expire ? "登录已超时" : "你已被管理员下线")
                    count += 1
                }
                return count
            }
            return encodeReply(200, ["sessions": count])
        case ("POST", "/control/notice"):
            // One notice, or an array of them.
            guard let notices = (try? decoder.decode(Simulator.Notice.self, from: data)).map({ [$0] })
                ?? (try? decoder.decode([Simulator.Notice].self, from: data))
            else { return badRequest("a notice needs id, title and body") }
            simulator.state.withLock { $0.notices += notices }
            return encodeReply(200, ["notices": simulator.state.withLock { $0.notices.count }])
        case ("DELETE", "/control/notice"):
            simulator.state.withLock { $0.notices = [] }
            return encodeReply(200, ["notices": 0])
        case ("POST", "/control/settings"):
            struct Change: Decodable { var interval: Int?; var timeout: Int?; var location: String? }
            guard let change = try? decoder.decode(Change.self, from: data) else { return badRequest("settings take interval, timeout, location") }
            if let location = change.location, !["none", "optional", "required"].contains(location) {
                return badRequest("location is none, optional or required")
            }
            simulator.state.withLock { state in
                if let interval = change.interval { state.settings.interval = interval }
                if let timeout = change.timeout { state.settings.timeout = timeout }
                if let location = change.location { state.settings.location = location }
            }
            return encodeReply(200, ["ok": true])
        case ("POST", "/control/refuse-logins"):
            guard let refusal = try? decoder.decode(Simulator.LoginRefusal.self, from: data) else {
                return badRequest("a refusal needs status and error")
            }
            simulator.state.withLock { $0.loginRefusal = refusal }
            return encodeReply(200, ["ok": true])
        case ("DELETE", "/control/refuse-logins"):
            simulator.state.withLock { $0.loginRefusal = nil }
            return encodeReply(200, ["ok": true])
        case ("POST", "/control/fault"):
            guard let fault = try? decoder.decode(Simulator.Fault.self, from: data),
                ["login", "keepalive", "logout", "any"].contains(fault.endpoint)
            else {
                return badRequest("a fault needs endpoint (login|keepalive|logout|any) and kind (status|rate-limit|hang|slow|garbage|oversized|reset)")
            }
            simulator.state.withLock { $0.faults.append(fault) }
            return encodeReply(200, ["ok": true])
        case ("DELETE", "/control/fault"):
            simulator.state.withLock { $0.faults = [] }
            return encodeReply(200, ["ok": true])
        default:
            return json(404, ["error": "not_found", "message": "unknown control endpoint; see ccsim --help"])
        }
    }

    private func badRequest(_ message: String) -> HTTPReply { json(400, ["error": "bad_request", "message": message]) }

    /// A session as the control API shows it (the token in full: this is a test tool).
    struct SessionView: Encodable {
        var session: String
        var ip: String
        var device: String
        var user: String?
        var certificate: String?
        var userAgent: String?
        var state: String
        var reason: String?
        var interval: Int
        var timeout: Int
        var reports: [Simulator.Report]

        enum CodingKeys: String, CodingKey {
            case session, ip, device, user, certificate, state, reason, interval, timeout, reports
            case userAgent = "user_agent"
        }

        init(_ session: Simulator.Session, expired: Bool) {
            self.session = session.token
            ip = session.ip
            device = session.device
            user = session.user
            certificate = session.certificate
            userAgent = session.userAgent
            let reason = session.endedReason ?? (expired ? "expired" : nil)
            state = reason == nil ? "online" : "logged_out"
            self.reason = reason
            interval = session.interval
            timeout = session.timeout
            reports = session.reports
        }
    }
}
