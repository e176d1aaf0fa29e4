import FoundationEssentials

/// Who is talking: sent in every login.
public struct ClientInfo: Codable, Sendable, Hashable {
    public var name: String
    public var version: String
    public var platform: String
    public init(name: String = "ccrelay", version: String, platform: String = "linux") {
        self.name = name
        self.version = version
        self.platform = platform
    }
}

/// The body of `POST /cc/v1/session`.
public struct LoginRequest: Encodable, Sendable {
    public var client: ClientInfo
    public var device: String
    /// Password login only; the password never comes from a file or argv.
    public var user: String?
    public var password: String?
    public init(client: ClientInfo, device: String, user: String? = nil, password: String? = nil) {
        self.client = client
        self.device = device
        self.user = user
        self.password = password
    }
}

/// Whether the campus wants a location fix with keep-alives.
public enum LocationPolicy: String, Codable, Sendable, Hashable {
    case none, optional, required
}

/// A location fix as sent with a keep-alive.
public struct LocationFix: Codable, Sendable, Hashable {
    public var lat: Double
    public var lon: Double
    public var accuracy: Double
    /// ISO 8601 UTC, such as `2026-11-29T14:05:00Z`.
    public var timestamp: String
    public init(lat: Double, lon: Double, accuracy: Double, timestamp: String) {
        self.lat = lat
        self.lon = lon
        self.accuracy = accuracy
        self.timestamp = timestamp
    }
}

/// The body of `POST /cc/v1/session/keepalive`.
public struct KeepAliveRequest: Encodable, Sendable {
    /// 1, 2, 3 … per session; a retry of the same report reuses its seq.
    public var seq: UInt64
    public var location: LocationFix?
    public init(seq: UInt64, location: LocationFix? = nil) {
        self.seq = seq
        self.location = location
    }
}

/// A campus announcement relayed by the server. Plain text, never markup.
public struct Notice: Codable, Sendable, Hashable {
    public static let textLimit = 1_000

    public var id: String
    public var title: String
    public var body: String
    /// `low`, `normal` or `critical`.
    public var urgency: String

    public init(id: String, title: String, body: String, urgency: String = "normal") {
        self.id = id
        self.title = String(title.prefix(Self.textLimit))
        self.body = String(body.prefix(Self.textLimit))
        self.urgency = urgency
    }

    private enum CodingKeys: String, CodingKey { case id, title, body, urgency }

    /// Lenient: missing text is empty, longer text is cut, unknown urgency is `normal`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let urgency = try container.decodeIfPresent(String.self, forKey: .urgency) ?? "normal"
        self.init(
            id: try container.decode(String.self, forKey: .id),
            title: try container.decodeIfPresent(String.self, forKey: .title) ?? "",
            body: try container.decodeIfPresent(String.self, forKey: .body) ?? "",
            urgency: ["low", "normal", "critical"].contains(urgency) ? urgency : "normal")
    }
}

/// What a successful login grants.
public struct LoginGrant: Sendable, Hashable, CustomStringConvertible {
    /// The session token. Secret: never logged (see `description`).
    public var session: String
    public var ip: String
    public var interval: Int
    public var timeout: Int
    public var location: LocationPolicy
    public var notices: [Notice]

    public var description: String {
        "LoginGrant(session: <redacted>, ip: \(ip), interval: \(interval), timeout: \(timeout), location: \(location.rawValue), notices: \(notices.count))"
    }
}

/// What an accepted keep-alive says; timing fields may change mid-session.
public struct KeepAliveGrant: Sendable, Hashable {
    public var interval: Int?
    public var timeout: Int?
    public var notices: [Notice]
    public init(interval: Int?, timeout: Int?, notices: [Notice]) {
        self.interval = interval
        self.timeout = timeout
        self.notices = notices
    }
}

/// The wire forms of the replies, decoded leniently and then validated.
enum Wire {
    struct LoginReply: Decodable {
        var session: String?
        var ip: String?
        var interval: Int?
        var timeout: Int?
        var location: String?
        var notices: [Notice]?
    }

    struct KeepAliveReply: Decodable {
        var status: String?
        var interval: Int?
        var timeout: Int?
        var notices: [Notice]?
    }

    /// Error bodies: `{"error", "message"}` or `{"status", "reason", "message"}`.
    struct ErrorReply: Decodable {
        var error: String?
        var status: String?
        var reason: String?
        var message: String?
        var retry_after: Int?
    }

    /// CC/1 servers grant 5–3600 s; the client accepts down to 1 s, leniently,
    /// so the simulator can play whole scenarios in seconds.
    static let intervalRange = 1...3600

    /// Why a reply is not valid CC/1.
    struct Problem: Error {
        var text: String
    }

    static func validate(_ reply: LoginReply) -> Result<LoginGrant, Problem> {
        guard let session = reply.session, (16...512).contains(session.utf8.count),
            session.utf8.allSatisfy({ (0x21...0x7e).contains($0) })
        else { return .failure(Problem(text: "the login reply has no valid session token")) }
        guard let interval = reply.interval, intervalRange.contains(interval) else {
            return .failure(Problem(text: "the login reply's interval is missing or outside 1–3600 s"))
        }
        guard let timeout = reply.timeout, timeout > interval else {
            return .failure(Problem(text: "the login reply's timeout is missing or not longer than its interval"))
        }
        return .success(
            LoginGrant(
                session: session, ip: reply.ip ?? "", interval: interval, timeout: timeout,
                location: reply.location.flatMap(LocationPolicy.init(rawValue:)) ?? .none,
                notices: reply.notices ?? []))
    }

    static func validate(_ reply: KeepAliveReply) -> Result<KeepAliveGrant, Problem> {
        if let interval = reply.interval, !intervalRange.contains(interval) {
            return .failure(Problem(text: "the keep-alive reply's interval \(interval) is outside 1–3600 s"))
        }
        if let timeout = reply.timeout, timeout <= (reply.interval ?? 0) {
            return .failure(Problem(text: "the keep-alive reply's timeout is not longer than its interval"))
        }
        return .success(KeepAliveGrant(interval: reply.interval, timeout: reply.timeout, notices: reply.notices ?? []))
    }
}
