import CoreVocabulary

/// One row of the portal's online table (the BAS's view), as `GET /control/sessions` shows it.
struct SrunSession: Sendable, Encodable {
    /// How the session came to be.
    enum Kind: String, Sendable, Codable {
        /// A portal login.
        case login
        /// Another device of the account, made by the control API.
        case device
        /// Online without a login (无感认证); logins and logouts leave it as it is.
        case macBound = "mac-bound"
        /// Left behind on an old address: blocks the account's logins (E2620).
        case stale
    }

    var id: Int
    var account: String
    var ip: String
    var kind: Kind
    /// Unix time of the login.
    var since: Int
    /// `class_name` in online_device_detail (a login's `name`).
    var deviceClass: String
    /// `os_name` (a login's `os`).
    var os: String
    var mac: String
    var accessToken: String

    enum CodingKeys: String, CodingKey {
        case account, ip, kind, since, os, mac
        case id = "rad_online_id"
        case deviceClass = "device_class"
        case accessToken = "access_token"
    }

    /// What a newer login may drop in kick mode, and what a logout may end.
    var ordinary: Bool { kind == .login || kind == .device }
}

/// A scripted answer for the next logins (`POST /control/next-login`).
struct SrunScriptedLogin: Sendable, Decodable {
    var ecode: String?
    var error: String?
    var errorMessage: String?
    var count: Int?

    enum CodingKeys: String, CodingKey {
        case ecode, error, count
        case errorMessage = "error_msg"
    }

    /// The answer's fields.
    var fields: SrunFields {
        if let ecode {
            return SrunReply.loginError(ecode: ecode, errorMessage ?? SrunReply.message(for: ecode))
        }
        let error = error ?? "login_error"
        if !error.isEmpty, error.allSatisfy({ $0.isLowercase || $0 == "_" }) {
            return SrunReply.failure(error, message: errorMessage ?? "")
        }
        return SrunReply.loginError(errorMessage ?? error)
    }
}

/// `POST /control/slow-challenge`.
struct SrunSlowChallenge: Sendable, Decodable {
    var seconds: Int
    var count: Int?
}

/// One request as the log shows it: never a parameter's value.
struct SrunLogEntry: Sendable, Encodable {
    var method: String
    var host: String
    var path: String
    var params: [String]
    var peer: String
}

/// Everything the portal knows; only touched under `SrunPortal.state`'s lock.
struct SrunState: Sendable {
    static let challengeLifetime: Duration = .seconds(60)
    static let loginInterval: Duration = .seconds(3)
    /// Challenges and attempt times kept at the most (expired ones go first).
    static let tableLimit = 4096
    static let logLimit = 1000

    struct Challenge: Sendable {
        var token: String
        var issued: ContinuousClock.Instant
    }

    let options: SrunOptions
    let users: [String: String]
    /// Oldest first.
    var sessions: [SrunSession] = []
    var nextSessionID = 1
    /// Keyed by source address and username.
    var challenges: [String: Challenge] = [:]
    /// The last judged login attempt of each account.
    var lastAttempt: [String: ContinuousClock.Instant] = [:]
    /// Reported values for every account, then for one.
    var reportedForAll: SrunFields = [:]
    var reported: [String: SrunFields] = [:]
    var scriptedLogins: [SrunScriptedLogin] = []
    var slowChallenge: SrunSlowChallenge?
    /// The token the next new challenge gets (for fixed test vectors).
    var nextToken: String?
    var captcha = false
    var log: [SrunLogEntry] = []

    init(options: SrunOptions, users: [String: String]) {
        self.options = options
        self.users = users
    }

    func session(at ip: String) -> SrunSession? { sessions.first { $0.ip == ip } }

    func sessions(of account: String) -> [SrunSession] { sessions.filter { $0.account == account } }

    mutating func add(account: String, ip: String, kind: SrunSession.Kind, deviceClass: String, os: String, mac: String,
                      since: Int) -> SrunSession {
        let session = SrunSession(
            id: nextSessionID, account: account, ip: ip, kind: kind, since: since, deviceClass: deviceClass, os: os, mac: mac,
            accessToken: SrunReply.newToken())
        nextSessionID += 1
        sessions.append(session)
        return session
    }

    /// Ends the sessions that match; returns how many.
    @discardableResult
    mutating func end(where matches: (SrunSession) -> Bool) -> Int {
        let before = sessions.count
        sessions.removeAll(where: matches)
        return before - sessions.count
    }

    /// In kick mode at the limit, drops the account's oldest ordinary session;
    /// false when the account is at its limit and nothing could be dropped.
    mutating func makeRoom(for account: String) -> Bool {
        guard let limit = options.sessionLimit, sessions(of: account).count >= limit else { return true }
        guard options.whenFull == .kick, let oldest = sessions(of: account).first(where: \.ordinary) else { return false }
        end { $0.id == oldest.id }
        return true
    }

    /// The live challenge for (ip, username), made when there is none.
    mutating func challenge(ip: String, username: String, now: ContinuousClock.Instant) -> (token: String, secondsLeft: Int) {
        let key = ip + " " + username
        if let known = challenges[key], now < known.issued + Self.challengeLifetime {
            let left = (known.issued + Self.challengeLifetime) - now
            return (known.token, Int((Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18).rounded(.up)))
        }
        if challenges.count >= Self.tableLimit {
            challenges = challenges.filter { now < $0.value.issued + Self.challengeLifetime }
            if challenges.count >= Self.tableLimit { challenges.removeAll() }
        }
        let made = Challenge(token: nextToken ?? SrunReply.newToken(), issued: now)
        nextToken = nil
        challenges[key] = made
        return (made.token, Int(Self.challengeLifetime.components.seconds))
    }

    mutating func record(_ entry: SrunLogEntry) {
        if log.count >= Self.logLimit { log.removeFirst(log.count - Self.logLimit + 1) }
        log.append(entry)
    }
}
