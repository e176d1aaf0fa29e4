/// What a campus portal reports of the account while the session is online
/// (a Srun portal's `rad_user_info`): the devices on it, traffic and time
/// used, quota or balance left. Every field is what the portal said, bounded;
/// nil when it did not say. Addresses are cut to their first parts before
/// they get here: the status is read by every local user on a shared box.
public struct AccountFacts: Sendable, Hashable {
    /// One session on the account.
    public struct Device: Sendable, Hashable {
        /// Its kind as the portal names it (`Android`, `Windows`, …), at most 32 characters.
        public var kind: String
        /// Its address, cut to its first two parts (`10.20.x.x`).
        public var address: String

        public init(kind: String, address: String) {
            self.kind = kind
            self.address = address
        }
    }

    public var devices: Int?
    public var deviceList: [Device]
    public var usedBytes: Int64?
    public var usedSeconds: Int64?
    /// Quota left, when the portal reports a positive one.
    public var remainBytes: Int64?
    /// Money left, when the portal reports a positive balance.
    public var balance: Double?
    /// The address the portal sees this computer at, cut to its first two parts.
    public var onlineIP: String?

    public init(devices: Int? = nil, deviceList: [Device] = [], usedBytes: Int64? = nil, usedSeconds: Int64? = nil, remainBytes: Int64? = nil,
                balance: Double? = nil, onlineIP: String? = nil) {
        self.devices = devices
        self.deviceList = deviceList
        self.usedBytes = usedBytes
        self.usedSeconds = usedSeconds
        self.remainBytes = remainBytes
        self.balance = balance
        self.onlineIP = onlineIP
    }

    /// An IPv4 address as its first two parts (`10.20.x.x`), an IPv6 one as its first two groups (`2001:da8:…`).
    public static func cut(_ address: String) -> String {
        let parts = address.split(separator: ".", omittingEmptySubsequences: false)
        if parts.count == 4, parts.allSatisfy({ !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isNumber) }) {
            return "\(parts[0]).\(parts[1]).x.x"
        }
        let groups = address.split(separator: ":", omittingEmptySubsequences: false)
        if groups.count >= 3, groups.count <= 8, groups.allSatisfy({ $0.count <= 4 && $0.allSatisfy(\.isHexDigit) }) {
            return groups.prefix(2).joined(separator: ":") + ":…"
        }
        return "?"
    }

    /// Devices the portal lists that `known` did not hold.
    func newDevices(since known: [Device]) -> [Device] {
        var left = known
        return deviceList.filter { device in
            if let index = left.firstIndex(of: device) {
                left.remove(at: index)
                return false
            }
            return true
        }
    }
}
