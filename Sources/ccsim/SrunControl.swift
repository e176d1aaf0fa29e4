import FoundationEssentials

/// The control API of `ccsim --protocol srun` (loopback, plain HTTP, JSON):
/// scripts a scenario and reads back what the portal saw. See `ccsim --help`.
struct SrunControl: Sendable {
    let portal: SrunPortal
    /// The portal's listener, for connection counts.
    let server: @Sendable () -> HTTPServer?

    /// Values `POST /control/account` may set.
    static let reportedFields: Set<String> = [
        "user_balance", "wallet_balance", "user_charge", "sum_bytes", "sum_seconds", "remain_bytes", "remain_seconds",
        "bytes_in", "bytes_out", "products_name", "billing_name", "real_name", "domain",
    ]

    private struct NewSession: Decodable {
        var account: String
        var ip: String
        var kind: SrunSession.Kind?
        var deviceClass: String?
        var os: String?
        var mac: String?

        enum CodingKeys: String, CodingKey {
            case account, ip, kind, os, mac
            case deviceClass = "device_class"
        }
    }

    private struct Selection: Decodable {
        var ip: String?
        var account: String?
    }

    func handle(_ request: HTTPRequest) -> HTTPReply {
        let data = Data(request.body)
        let decoder = JSONDecoder()
        switch (request.method, request.path) {
        case ("GET", "/control/sessions"):
            return encodeReply(200, portal.state.withLock { $0.sessions })
        case ("POST", "/control/sessions"):
            guard let new = try? decoder.decode(NewSession.self, from: data), !new.account.isEmpty, !new.ip.isEmpty,
                new.kind != .login
            else { return badRequest("a session needs account and ip; kind is device, mac-bound or stale") }
            return portal.state.withLock { state in
                guard state.session(at: new.ip) == nil else { return json(409, ["error": "conflict", "message": "\(new.ip) is online already"]) }
                let kind = new.kind ?? .device
                if kind == .device { _ = state.makeRoom(for: new.account) }
                _ = state.add(
                    account: new.account, ip: new.ip, kind: kind, deviceClass: new.deviceClass ?? "", os: new.os ?? "", mac: new.mac ?? "",
                    since: Int(Date().timeIntervalSince1970))
                return encodeReply(200, ["sessions": state.sessions(of: new.account).count])
            }
        case ("DELETE", "/control/sessions"):
            let selection = data.isEmpty ? Selection() : (try? decoder.decode(Selection.self, from: data))
            guard let selection else { return badRequest("select sessions by ip and/or account") }
            let ended = portal.state.withLock { state in
                state.end { (selection.ip == nil || $0.ip == selection.ip) && (selection.account == nil || $0.account == selection.account) }
            }
            return encodeReply(200, ["sessions": ended])
        case ("GET", "/control/stats"):
            let listener = server()
            return encodeReply(200, [
                "connections": listener?.connectionsAccepted.load(ordering: .relaxed) ?? 0,
                "requests": listener?.requestsHandled.load(ordering: .relaxed) ?? 0,
            ])
        case ("GET", "/control/requests"):
            return encodeReply(200, portal.state.withLock { $0.log })
        case ("DELETE", "/control/requests"):
            portal.state.withLock { $0.log = [] }
            return encodeReply(200, ["requests": 0])
        case ("POST", "/control/next-login"):
            guard let scripted = try? decoder.decode(SrunScriptedLogin.self, from: data), scripted.ecode != nil || scripted.error != nil,
                (scripted.count ?? 1) >= 1
            else { return badRequest("next-login takes ecode or error, error_msg? and count? (1 or more)") }
            let queued = portal.state.withLock { state in
                state.scriptedLogins.append(scripted)
                return state.scriptedLogins.count
            }
            return encodeReply(200, ["scripted": queued])
        case ("DELETE", "/control/next-login"):
            portal.state.withLock { $0.scriptedLogins = [] }
            return encodeReply(200, ["scripted": 0])
        case ("POST", "/control/slow-challenge"):
            guard let slow = try? decoder.decode(SrunSlowChallenge.self, from: data), (0...600).contains(slow.seconds), (slow.count ?? 1) >= 1 else {
                return badRequest("slow-challenge takes seconds (0 to 600) and count? (1 or more)")
            }
            portal.state.withLock { $0.slowChallenge = slow.seconds == 0 ? nil : slow }
            return encodeReply(200, ["ok": true])
        case ("DELETE", "/control/slow-challenge"):
            portal.state.withLock { $0.slowChallenge = nil }
            return encodeReply(200, ["ok": true])
        case ("POST", "/control/next-challenge"):
            struct Token: Decodable { var token: String }
            guard let given = try? decoder.decode(Token.self, from: data), given.token.utf8.count == 64,
                given.token.allSatisfy({ $0.isHexDigit && !$0.isUppercase })
            else { return badRequest("next-challenge takes {\"token\": 64 lowercase hex characters}") }
            portal.state.withLock { $0.nextToken = given.token }
            return encodeReply(200, ["ok": true])
        case ("POST", "/control/captcha"):
            struct Switch: Decodable { var on: Bool }
            guard let change = try? decoder.decode(Switch.self, from: data) else { return badRequest("captcha takes {\"on\": true|false}") }
            portal.state.withLock { $0.captcha = change.on }
            return encodeReply(200, ["captcha": change.on])
        case ("POST", "/control/account"):
            return report(data)
        default:
            return json(404, ["error": "not_found", "message": "unknown control endpoint; see ccsim --help"])
        }
    }

    /// `POST /control/account`: values rad_user_info reports, for one account or every one.
    private func report(_ data: Data) -> HTTPReply {
        guard var values = try? JSONDecoder().decode(SrunFields.self, from: data) else {
            return badRequest("account takes {\"account\"?: ID, FIELD: number or string…}")
        }
        var account: String?
        if let given = values.removeValue(forKey: "account") {
            guard case .text(let name) = given else { return badRequest("account is a string") }
            account = name
        }
        if let unknown = values.keys.sorted().first(where: { !Self.reportedFields.contains($0) }) {
            return badRequest("'\(unknown)' is not a value ccsim reports; see ccsim --help")
        }
        portal.state.withLock { state in
            if let account {
                state.reported[account, default: [:]].merge(values) { $1 }
            } else {
                state.reportedForAll.merge(values) { $1 }
            }
        }
        return encodeReply(200, ["ok": true])
    }

    private func badRequest(_ message: String) -> HTTPReply { json(400, ["error": "bad_request", "message": message]) }
}
