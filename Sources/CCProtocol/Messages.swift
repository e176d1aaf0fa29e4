import CCRelayCore
import CoreVocabulary

/// Who is talking: sent in every login.
public struct ClientInfo: Sendable, Hashable {
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
public struct LoginRequest: Sendable {
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
public struct KeepAliveRequest: Sendable {
    /// 1, 2, 3 … per session; a retry of the same report reuses its seq.
    public var seq: UInt64
    public var location: LocationFix?
    public init(seq: UInt64, location: LocationFix? = nil) {
        self.seq = seq
        self.location = location
    }
}

/// A campus announcement relayed by the server. Plain text, never markup.
public struct Notice: Sendable, Hashable {
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

    /// Lenient: missing text (or text of another type) is empty, longer text
    /// is cut, unknown urgency is `normal`. Only the id must be right: a
    /// string of 1–256 bytes, else the notice is malformed (nil).
    init?(wire: Wire.Members) {
        guard let id = wire.string("id"), (1...Wire.noticeIDLimit).contains(id.utf8.count) else { return nil }
        let urgency = wire.string("urgency") ?? "normal"
        self.init(
            id: id, title: wire.string("title") ?? "", body: wire.string("body") ?? "",
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
    /// A login's JSON body: members in sorted order, absent ones left out.
    static func body(_ login: LoginRequest) -> String {
        let client = JSONText.object([
            ("name", JSONText.string(login.client.name)), ("platform", JSONText.string(login.client.platform)),
            ("version", JSONText.string(login.client.version)),
        ])
        var members = [("client", client), ("device", JSONText.string(login.device))]
        if let password = login.password { members.append(("password", JSONText.string(password))) }
        if let user = login.user { members.append(("user", JSONText.string(user))) }
        return JSONText.object(members)
    }

    /// A keep-alive's JSON body: members in sorted order, the fix left out when there is none.
    static func body(_ keepAlive: KeepAliveRequest) -> String {
        var members: [(String, String)] = []
        if let fix = keepAlive.location {
            members.append(
                ("location", JSONText.object([
                    ("accuracy", JSONText.number(fix.accuracy)), ("lat", JSONText.number(fix.lat)),
                    ("lon", JSONText.number(fix.lon)), ("timestamp", JSONText.string(fix.timestamp)),
                ])))
        }
        members.append(("seq", "\(keepAlive.seq)"))
        return JSONText.object(members)
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

    struct LoginReply {
        var session: String?
        var ip: String?
        var interval: Int?
        var timeout: Int?
        var location: String?
        var notices = NoticeList()

        init(_ fields: Members) {
            session = fields.string("session")
            ip = fields.string("ip")
            interval = fields.boundedInteger("interval", intervalRange)
            timeout = fields.boundedInteger("timeout", timeoutRange)
            location = fields.string("location")
            notices = fields.notices()
        }
    }

    struct KeepAliveReply {
        var status: String?
        var interval: Int?
        var timeout: Int?
        var notices = NoticeList()

        init(_ fields: Members) {
            status = fields.string("status")
            interval = fields.boundedInteger("interval", intervalRange)
            timeout = fields.boundedInteger("timeout", timeoutRange)
            notices = fields.notices()
        }
    }

    /// Error bodies: `{"error", "message"}` or `{"status", "reason", "message"}`.
    struct ErrorReply {
        var error: String?
        var status: String?
        var reason: String?
        var message: String?
        var retryAfter: Int?

        init(_ fields: Members) {
            error = fields.string("error")
            status = fields.string("status")
            reason = fields.string("reason")
            message = fields.string("message").map { String($0.prefix(Notice.textLimit)) }
            retryAfter = fields.boundedInteger("retry_after", retryAfterRange)
        }
    }

    /// The notices of a reply: the well-formed ones, and how many were dropped.
    struct NoticeList: Sendable {
        var notices: [Notice] = []
        var dropped = 0
    }

    /// An object's members, read leniently: a member of another type than
    /// the one asked for counts as absent.
    struct Members {
        let values: [String: JSONScan.Value]

        /// The members of the object that is the whole of `body`, or nil when it is not CC/1's JSON.
        init?(body: [UInt8]) {
            guard let values = JSONScan.document(body) else { return nil }
            self.values = values
        }

        init(_ values: [String: JSONScan.Value]) { self.values = values }

        /// A string, or nil when absent or of another type.
        func string(_ name: String) -> String? {
            guard case .scalar(.string(let text))? = values[name] else { return nil }
            return text
        }

        /// A number (integer or finite float, of any size or sign) clamped into
        /// `range`, or nil when absent or not a number.
        func boundedInteger(_ name: String, _ range: ClosedRange<Int>) -> Int? {
            guard case .scalar(.number(let text))? = values[name] else { return nil }
            if let integer = Int(text) { return min(max(integer, range.lowerBound), range.upperBound) }
            guard let number = Double(text), number.isFinite else { return nil }
            return Int(min(max(number.rounded(.down), Double(range.lowerBound)), Double(range.upperBound)))
        }

        /// `notices`: up to `Wire.noticeLimit` well-formed entries; a value that
        /// is not an array, and every malformed entry, counts as dropped.
        func notices() -> NoticeList {
            switch values["notices"] {
            case nil, .scalar(.null)?: return NoticeList()
            case .array(let entries)?:
                var list = NoticeList()
                for entry in entries {
                    if case .object(let members) = entry, let notice = Notice(wire: Members(members)), list.notices.count < noticeLimit {
                        list.notices.append(notice)
                    } else {
                        list.dropped += 1
                    }
                }
                return list
            default: return NoticeList(notices: [], dropped: 1)
            }
        }
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
