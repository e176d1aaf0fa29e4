import FoundationEssentials
import CCRelayCore

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
        self.title = Self.visible(String(title.prefix(Self.textLimit)))
        self.body = Self.visible(String(body.prefix(Self.textLimit)))
        self.urgency = urgency
    }

    /// A NUL (which would end the text in C, SQLite and D-Bus) as the visible
    /// replacement character: the text after it is kept, never cut off silently.
    static func visible(_ text: String) -> String {
        text.contains("\u{0}") ? String(String.UnicodeScalarView(text.unicodeScalars.map { $0 == "\u{0}" ? "\u{FFFD}" : $0 })) : text
    }

    private enum CodingKeys: String, CodingKey { case id, title, body, urgency }

    /// Lenient: missing text (or text of another type) is empty, longer text
    /// is cut, unknown urgency is `normal`. Only the id must be right: a
    /// string of 1–256 bytes, else the notice is malformed.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func text(_ key: CodingKeys) -> String? { (try? container.decodeIfPresent(String.self, forKey: key)) ?? nil }
        let id = try container.decode(String.self, forKey: .id)
        guard (1...Wire.noticeIDLimit).contains(id.utf8.count) else {
            throw DecodingError.dataCorruptedError(forKey: .id, in: container, debugDescription: "a notice id has 1–256 bytes")
        }
        let urgency = text(.urgency) ?? "normal"
        self.init(
            id: id, title: text(.title) ?? "", body: text(.body) ?? "",
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
    public var location: ServerLocationPolicy
    public var notices: [Notice]
    /// Entries of `notices` that were malformed (or beyond `Wire.noticeLimit`) and dropped.
    public var droppedNotices: Int

    public var description: String {
        "LoginGrant(session: <redacted>, ip: \(ip), interval: \(interval), timeout: \(timeout), location: \(location.rawValue), notices: \(notices.count))"
    }
}

/// What an accepted keep-alive says; timing fields may change mid-session.
public struct KeepAliveGrant: Sendable, Hashable {
    public var interval: Int?
    public var timeout: Int?
    public var notices: [Notice]
    /// Entries of `notices` that were malformed (or beyond `Wire.noticeLimit`) and dropped.
    public var droppedNotices: Int
    public init(interval: Int?, timeout: Int?, notices: [Notice], droppedNotices: Int = 0) {
        self.interval = interval
        self.timeout = timeout
        self.notices = notices
        self.droppedNotices = droppedNotices
    }
}

/// The wire forms of the replies. Decoding is lenient field by field (a
/// field of the wrong type counts as absent, a malformed notice is dropped,
/// the rest of the reply stands), and every number is bounded here, before
/// any arithmetic sees it.
enum Wire {
    /// One encoder for every request body (made once: it is not free; its
    /// settings are never changed after this).
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// A request's JSON body.
    static func body<T: Encodable>(_ value: T) -> String {
        (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// docs/protocol.md's bounds. CC/1 servers grant 5–3600 s; the client accepts
    /// down to 1 s, leniently, so the simulator can play whole scenarios in seconds.
    static let intervalRange = ServerTiming.intervals
    static let timeoutRange = ServerTiming.timeouts
    static let retryAfterRange = 0...600
    /// Notices taken from one reply; the rest are dropped (bounded work per
    /// reply: a 64 KiB body holds a few thousand tiny ones at most).
    static let noticeLimit = 1_000
    /// A notice id longer than this is malformed.
    static let noticeIDLimit = 256
    /// The granted address is shown to people: printable ASCII, this long at most.
    static let ipLimit = 64

    struct LoginReply: Decodable {
        var session: String?
        var ip: String?
        var interval: Int?
        var timeout: Int?
        var location: String?
        var notices = NoticeList()

        init(from decoder: any Decoder) throws {
            let fields = try decoder.container(keyedBy: Field.self)
            session = fields.lenientString(.session)
            ip = fields.lenientString(.ip)
            interval = fields.boundedInteger(.interval, intervalRange)
            timeout = fields.boundedInteger(.timeout, timeoutRange)
            location = fields.lenientString(.location)
            notices = fields.notices()
        }
    }

    struct KeepAliveReply: Decodable {
        var status: String?
        var interval: Int?
        var timeout: Int?
        var notices = NoticeList()

        init(from decoder: any Decoder) throws {
            let fields = try decoder.container(keyedBy: Field.self)
            status = fields.lenientString(.status)
            interval = fields.boundedInteger(.interval, intervalRange)
            timeout = fields.boundedInteger(.timeout, timeoutRange)
            notices = fields.notices()
        }
    }

    /// Error bodies: `{"error", "message"}` or `{"status", "reason", "message"}`.
    struct ErrorReply: Decodable {
        var error: String?
        var status: String?
        var reason: String?
        var message: String?
        var retryAfter: Int?

        init(from decoder: any Decoder) throws {
            let fields = try decoder.container(keyedBy: Field.self)
            error = fields.lenientString(.error)
            status = fields.lenientString(.status)
            reason = fields.lenientString(.reason)
            message = fields.lenientString(.message).map { String($0.prefix(Notice.textLimit)) }
            retryAfter = fields.boundedInteger(.retry_after, retryAfterRange)
        }
    }

    /// The notices of a reply: the well-formed ones, and how many were dropped.
    struct NoticeList: Sendable {
        var notices: [Notice] = []
        var dropped = 0
    }

    enum Field: String, CodingKey {
        case session, ip, interval, timeout, location, notices, status, error, reason, message, retry_after
    }

    /// Why a reply is not valid CC/1.
    struct Problem: Error {
        var text: String
    }

    /// A `Retry-After` header in seconds (RFC 9110's delay-seconds form),
    /// bounded to 10 minutes; an HTTP date or anything else is ignored.
    static func retryAfter(header: String?) -> Int? {
        let blank: Set<UInt8> = [0x20, 0x09, 0x0D, 0x0A]
        guard let bytes = header.map({ Array($0.utf8.drop(while: blank.contains).reversed().drop(while: blank.contains).reversed()) }),
            !bytes.isEmpty, bytes.allSatisfy({ (0x30...0x39).contains($0) })
        else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        // Digits only: anything longer than 4 digits is over the bound.
        return text.utf8.count > 4 ? retryAfterRange.upperBound : min(Int(text)!, retryAfterRange.upperBound)
    }

    static func validate(_ reply: LoginReply) -> Result<LoginGrant, Problem> {
        guard let session = reply.session, isValidToken(session) else {
            return .failure(Problem(text: "the login reply has no valid session token"))
        }
        guard let interval = reply.interval else {
            return .failure(Problem(text: "the login reply has no interval"))
        }
        guard let timeout = reply.timeout else {
            return .failure(Problem(text: "the login reply has no timeout"))
        }
        return .success(
            LoginGrant(
                session: session, ip: displayableIP(reply.ip), interval: interval, timeout: timeout,
                location: reply.location.flatMap(ServerLocationPolicy.init(rawValue:)) ?? .none,
                notices: reply.notices.notices, droppedNotices: reply.notices.dropped))
    }

    static func validate(_ reply: KeepAliveReply) -> Result<KeepAliveGrant, Problem> {
        .success(
            KeepAliveGrant(
                interval: reply.interval, timeout: reply.timeout, notices: reply.notices.notices,
                droppedNotices: reply.notices.dropped))
    }

    static func isValidToken(_ token: String) -> Bool { SessionToken.isValid(token) }

    /// The granted address as shown: printable ASCII up to `ipLimit`, else nothing.
    static func displayableIP(_ text: String?) -> String {
        guard let text, text.utf8.count <= ipLimit, text.utf8.allSatisfy({ (0x20...0x7e).contains($0) }) else { return "" }
        return text
    }
}

/// A value decoded on its own: a malformed element becomes nil instead of
/// failing the array (and the unkeyed container still moves past it).
private struct Lossy<Value: Decodable>: Decodable {
    var value: Value?
    init(from decoder: any Decoder) throws { value = try? Value(from: decoder) }
}

extension KeyedDecodingContainer where Key == Wire.Field {
    /// A string, or nil when absent or of another type.
    func lenientString(_ key: Key) -> String? { (try? decodeIfPresent(String.self, forKey: key)) ?? nil }

    /// A number (integer or finite float, of any size or sign) clamped into
    /// `range`, or nil when absent or not a number.
    func boundedInteger(_ key: Key, _ range: ClosedRange<Int>) -> Int? {
        if let integer = (try? decodeIfPresent(Int.self, forKey: key)) ?? nil {
            return min(max(integer, range.lowerBound), range.upperBound)
        }
        guard let number = (try? decodeIfPresent(Double.self, forKey: key)) ?? nil, number.isFinite else { return nil }
        return Int(min(max(number.rounded(.down), Double(range.lowerBound)), Double(range.upperBound)))
    }

    /// `notices`: up to `Wire.noticeLimit` well-formed entries; a value that
    /// is not an array, and every malformed entry, counts as dropped.
    func notices() -> Wire.NoticeList {
        guard contains(.notices), (try? decodeNil(forKey: .notices)) != true else { return Wire.NoticeList() }
        guard let entries = try? decode([Lossy<Notice>].self, forKey: .notices) else {
            return Wire.NoticeList(notices: [], dropped: 1)
        }
        var list = Wire.NoticeList()
        for entry in entries {
            if let notice = entry.value, list.notices.count < Wire.noticeLimit {
                list.notices.append(notice)
            } else {
                list.dropped += 1
            }
        }
        return list
    }
}
