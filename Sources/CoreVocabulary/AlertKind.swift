/// The kinds of alert ccrelay raises: the local notifications of the iOS CC
/// client, on the desktop. Each kind has one notification slot, so an ongoing
/// problem updates its bubble instead of stacking new ones.
public enum AlertKind: String, CaseIterable, Sendable, Hashable, Codable {
    case loggedOut = "logged-out"
    case keepAliveFailing = "keepalive-failing"
    case locationDenied = "location-denied"
    case locationOff = "location-off"
    case locationTooCoarse = "location-too-coarse"
    case credentials = "credentials"
    case serverUntrusted = "server-untrusted"
    case notice = "notice"
    case backOnline = "back-online"
    /// A `[relay]` target refuses the forwarded alerts (a wrong URL or token).
    case forwardRefused = "relay-refused"
    /// A configuration file exists but cannot be used (it names file:line and the fix).
    case notSetUp = "not-set-up"
    /// The session is granted, but traffic does not get out (a portal, or a limited network).
    case noOutsideAccess = "no-outside-access"
    /// Another device logged in to the account while this one is online (a Srun portal says so).
    case newDevice = "new-device"
    /// The status bubble shown when CC Relay is launched: not an alert, never journaled.
    case status = "status"

    /// The `category` hint (freedesktop categories, or `x-ccrelay.*`).
    public var category: String {
        switch self {
        case .loggedOut: "network.disconnected"
        case .keepAliveFailing, .noOutsideAccess: "network.error"
        case .locationDenied, .locationOff, .locationTooCoarse: "x-ccrelay.location"
        case .credentials, .notSetUp: "x-ccrelay.auth"
        case .serverUntrusted: "x-ccrelay.trust"
        case .notice: "x-ccrelay.notice"
        case .backOnline: "network.connected"
        case .forwardRefused: "x-ccrelay.relay"
        case .newDevice: "x-ccrelay.account"
        case .status: "x-ccrelay.status"
        }
    }

    /// How much one alert of this kind adds to the unread badge.
    public var badgeIncrement: Int { self == .backOnline || self == .status ? 0 : 1 }
}

/// Notification urgency, as the `urgency` hint's byte values.
public enum Urgency: UInt8, Sendable, Hashable, Codable, Comparable {
    case low = 0
    case normal = 1
    case critical = 2

    /// Parses the server's notice urgency; anything unknown is `normal`.
    public init(noticeText: String?) {
        switch noticeText {
        case "low": self = .low
        case "critical": self = .critical
        default: self = .normal
        }
    }

    public static func < (lhs: Urgency, rhs: Urgency) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// An action button offered on a notification.
public struct AlertAction: Sendable, Hashable {
    /// The key the server reports back in `ActionInvoked`.
    public var key: String
    /// The localized label.
    public var label: String
    public init(key: String, label: String) {
        self.key = key
        self.label = label
    }

    /// The key of the default action (clicking the bubble).
    public static let defaultKey = "default"
    /// The key of the "log in again" action of a logout alert.
    public static let reloginKey = "relogin"
    /// The status bubble's actions.
    public static let loginKey = "login"
    public static let logoutKey = "logout"
    public static let clearBadgeKey = "clear-badge"
    /// Opens `ccrelay setup` in a terminal (the not-set-up status bubble).
    public static let setUpKey = "set-up"
}

/// One alert, ready to show: localized text and presentation.
public struct Alert: Sendable, Hashable {
    public var kind: AlertKind
    public var title: String
    public var body: String
    public var urgency: Urgency
    public var actions: [AlertAction]
    /// Not kept in the notification server's history (`transient` hint).
    public var transient: Bool
    /// Kept by the server after an action is invoked (`resident` hint).
    public var resident: Bool

    public init(kind: AlertKind, title: String, body: String, urgency: Urgency, actions: [AlertAction] = [],
                transient: Bool = false, resident: Bool = false) {
        self.kind = kind
        self.title = title
        self.body = body
        self.urgency = urgency
        self.actions = actions
        self.transient = transient
        self.resident = resident
    }
}
