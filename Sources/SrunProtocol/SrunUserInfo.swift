import CCRelayCore
import CoreVocabulary

/// What `rad_user_info` says about the address asking: the portal's only
/// "am I online" answer (it never says why a session ended).
public enum SrunUserInfo: Sendable, Hashable {
    /// A session is online at this address.
    case online(SrunAccount)
    /// No session here; the address the portal sees, when it said a valid one.
    case offline(clientIP: String?)

    /// Reads JSONP or JSON, else (best-effort) the legacy text form, or says why the answer is none of them.
    static func read(_ body: [UInt8], callback: String) -> Result<SrunUserInfo, SrunAnswer.Problem> {
        switch SrunAnswer.read(body, callback: callback) {
        case .success(let answer):
            if answer.error == "ok" { return .success(.online(SrunAccount(answer))) }
            if answer.error?.hasPrefix("not_online") == true {
                return .success(.offline(clientIP: answer.address("client_ip") ?? answer.address("online_ip")))
            }
            return .failure(SrunAnswer.Problem(text: "rad_user_info answered '\(answer.error.map { String($0.prefix(64)) } ?? "")'"))
        case .failure(let problem):
            return legacy(body).map { .success($0) } ?? .failure(problem)
        }
    }

    /// The legacy text form (no JSON at all): `not_online`, or a comma list
    /// with the user name at [0], bytes at [6], seconds at [7] and the
    /// address at [8] (the other places' meanings are unknown).
    private static func legacy(_ body: [UInt8]) -> SrunUserInfo? {
        guard body.count <= 4096, !body.contains(UInt8(ascii: "{")), !body.contains(UInt8(ascii: "(")) else { return nil }
        let text = String(decoding: body.drop(while: SrunAnswer.isSpace).reversed().drop(while: SrunAnswer.isSpace).reversed(), as: UTF8.self)
        if text == "not_online" || text == "not_online_error" { return .offline(clientIP: nil) }
        let fields = text.split(separator: ",", omittingEmptySubsequences: false).map { String($0) }
        guard fields.count >= 9, let ip = SrunText.address(fields[8]) else { return nil }
        let answer = SrunAnswer(members: ["user_name": .string(fields[0]), "sum_bytes": .string(fields[6]), "sum_seconds": .string(fields[7]),
                                          "online_ip": .string(ip)])
        return .online(SrunAccount(answer))
    }
}

/// The session `rad_user_info` reports, every field checked: text cleaned
/// and bounded, numbers in range, addresses valid (else nil).
public struct SrunAccount: Sendable, Hashable {
    /// `user_name`; may be empty (some portals leave it blank) or carry the domain.
    public var userName: String
    public var onlineIP: String?
    public var onlineIP6: String?
    /// `online_device_total`: the account's sessions, here and elsewhere.
    public var deviceTotal: Int?
    /// `online_device_detail`: the account's sessions, when the portal lists them.
    public var devices: [SrunDevice]
    /// Traffic used (`sum_bytes`) and time online (`sum_seconds`), in the portal's accounting period.
    public var sumBytes: Int64?
    public var sumSeconds: Int64?
    /// `remain_bytes` (0 at most portals: unlimited or unused).
    public var remainBytes: Int64?
    /// `user_balance` and `wallet_balance`, in the campus's currency.
    public var userBalance: Double?
    public var walletBalance: Double?
    /// When the session began (`add_time`, Unix seconds).
    public var addTime: Int64?

    /// The most devices read from one answer.
    static let deviceLimit = 64

    public init(userName: String, onlineIP: String? = nil, onlineIP6: String? = nil, deviceTotal: Int? = nil, devices: [SrunDevice] = [],
                sumBytes: Int64? = nil, sumSeconds: Int64? = nil, remainBytes: Int64? = nil, userBalance: Double? = nil,
                walletBalance: Double? = nil, addTime: Int64? = nil) {
        self.userName = userName
        self.onlineIP = onlineIP
        self.onlineIP6 = onlineIP6
        self.deviceTotal = deviceTotal
        self.devices = devices
        self.sumBytes = sumBytes
        self.sumSeconds = sumSeconds
        self.remainBytes = remainBytes
        self.userBalance = userBalance
        self.walletBalance = walletBalance
        self.addTime = addTime
    }

    init(_ answer: SrunAnswer) {
        self.init(
            userName: answer.text("user_name") ?? "", onlineIP: answer.address("online_ip"), onlineIP6: answer.address("online_ip6"),
            deviceTotal: answer.count("online_device_total", maximum: 10_000).map { Int($0) }, devices: Self.devices(answer),
            sumBytes: answer.count("sum_bytes"), sumSeconds: answer.count("sum_seconds"), remainBytes: answer.count("remain_bytes"),
            userBalance: answer.amount("user_balance"), walletBalance: answer.amount("wallet_balance"),
            addTime: answer.count("add_time", maximum: 1 << 40))
    }

    /// `online_device_detail` is JSON inside a string: an object keyed by
    /// session id, each value an object with `ip`, `ip6`, `class_name`,
    /// `os_name` …; anything malformed reads as no devices.
    private static func devices(_ answer: SrunAnswer) -> [SrunDevice] {
        guard case .string(let detail) = answer.members["online_device_detail"], let sessions = JSONScan.objects(detail) else { return [] }
        return sessions.keys.sorted().prefix(deviceLimit).map { key in
            let session = SrunAnswer(members: sessions[key] ?? [:])
            return SrunDevice(className: session.text("class_name", limit: 64) ?? "", osName: session.text("os_name", limit: 64) ?? "",
                              ip: session.address("ip"), ip6: session.address("ip6"))
        }
    }
}

/// One session of the account, from `online_device_detail`.
public struct SrunDevice: Sendable, Hashable {
    /// `class_name` and `os_name`: the kind of device, as the portal classed it.
    public var className: String
    public var osName: String
    public var ip: String?
    public var ip6: String?

    public init(className: String, osName: String, ip: String?, ip6: String? = nil) {
        self.className = className
        self.osName = osName
        self.ip = ip
        self.ip6 = ip6
    }
}
