import CoreVocabulary

/// What the tray shows, as facts: the daemon's state, the unread badge and
/// the newest alerts.
public struct TrayFacts: Sendable, Hashable {
    public var state: DaemonState
    public var ip: String
    /// Seconds until the server logs the session out, when there is one.
    public var remaining: Int64?
    /// What stands in the way (the last error, or the configuration problem).
    public var problem: String
    public var unread: Int
    /// A critical alert is among the unread ones.
    public var urgent: Bool
    /// The newest alerts, newest first (at most `TrayModel.recentLimit` are shown).
    public var recent: [RecentAlert]
    /// Whether traffic gets out (IPv4 or IPv6; `off` when not checked).
    public var outside: OutsideVerdict = .off
    /// The sessions on the account, this one included, when the portal says (a Srun portal's `online_device_total`).
    public var devices: Int?

    public init(state: DaemonState, ip: String, remaining: Int64?, problem: String, unread: Int, urgent: Bool, recent: [RecentAlert]) {
        self.state = state
        self.ip = ip
        self.remaining = remaining
        self.problem = problem
        self.unread = unread
        self.urgent = urgent
        self.recent = recent
    }

    /// One journaled alert, as the menu lists it.
    public struct RecentAlert: Sendable, Hashable {
        public var id: Int64
        public var title: String
        public var unread: Bool
        public init(id: Int64, title: String, unread: Bool) {
            self.id = id
            self.title = title
            self.unread = unread
        }
    }
}

/// How the StatusNotifierItem looks for some facts.
public struct TrayLook: Sendable, Hashable {
    /// A themed icon name the package ships (`io.github.ccrelay.CCRelay-<state>`).
    public var iconName: String
    /// `Active`, or `NeedsAttention` while a critical alert is unread — never
    /// `Passive`: XFCE's systray and LXQt hide a passive item and KDE folds
    /// it away, and the icon is the one way to Log out, Clear badge or Quit
    /// without a terminal, whatever the state.
    public var status: String
    /// The tooltip: a title and a body of plain text lines.
    public var tooltipTitle: String
    public var tooltipBody: String
}

/// One entry of the tray menu (`com.canonical.dbusmenu` item properties).
public struct TrayMenuItem: Sendable, Hashable {
    /// Stable per entry: the menu's layout refers to items by id.
    public var id: Int32
    public var label: String
    public var enabled: Bool
    public var isSeparator: Bool
    /// What choosing it asks (nil: a label or a separator).
    public var action: UserRequest?

    public init(id: Int32, label: String, enabled: Bool = true, isSeparator: Bool = false, action: UserRequest? = nil) {
        self.id = id
        self.label = label
        self.enabled = enabled
        self.isSeparator = isSeparator
        self.action = action
    }
}

/// The tray's icon, status, tooltip and menu for some facts (pure, so the
/// rules are tested without a tray host).
public enum TrayModel {
    /// Alerts listed in the menu.
    public static let recentLimit = 5

    public static func look(_ facts: TrayFacts, localize: Localizer) -> TrayLook {
        let icon =
            switch facts.state {
            case .online, .sleeping, .loggingIn: "online"
            case .failing: "failing"
            case .noNetwork: "no-network"
            case .unconfigured: "setup"
            case .offline, .loggedOut: "logged-out"
            }
        let status = facts.urgent && facts.unread > 0 ? "NeedsAttention" : "Active"
        var lines = [stateLine(facts, localize: localize)]
        if let remaining = facts.remaining, facts.state == .online || facts.state == .failing {
            lines.append(TextTemplate.fill(localize("%s left before the server logs this computer out"), clock(remaining, localize: localize)))
        }
        if let devices = facts.devices, facts.state == .online {
            lines.append(localize.plural("%s device on the account", "%s devices on the account", count: devices))
        }
        if !facts.problem.isEmpty && facts.state != .online { lines.append(facts.problem) }
        // Online is the server's word: whether traffic gets out is said apart.
        if facts.state == .online && facts.outside == .portal { lines.append(localize("No outside access: a login page (portal) answers")) }
        if facts.state == .online && facts.outside == .limited { lines.append(localize("No outside access: the way out is limited")) }
        if facts.unread > 0 { lines.append(localize.plural("%s unread alert", "%s unread alerts", count: facts.unread)) }
        return TrayLook(
            // The state in the title too: LXQt's tooltip shows only the title.
            iconName: "io.github.ccrelay.CCRelay-" + icon, status: status, tooltipTitle: "CC Relay — " + stateLine(facts, localize: localize),
            tooltipBody: lines.joined(separator: "\n"))
    }

    /// The menu: the state, Log in / Log out, Clear badge (N), the newest
    /// alerts (clicking one acknowledges it) and the timeline that says why
    /// they came, Set up…, Quit.
    public static func menu(_ facts: TrayFacts, localize: Localizer) -> [TrayMenuItem] {
        var items = [TrayMenuItem(id: 1, label: stateLine(facts, localize: localize), enabled: false), separator(2)]
        switch facts.state {
        case .online, .failing, .loggingIn:
            items.append(TrayMenuItem(id: 3, label: localize("Log out"), action: .logout))
        case .unconfigured:
            items.append(TrayMenuItem(id: 3, label: localize("Log in"), enabled: false, action: .login))
        default:
            items.append(TrayMenuItem(id: 3, label: localize("Log in"), action: .login))
        }
        items.append(TrayMenuItem(
            id: 4, label: TextTemplate.fill(localize("Clear badge (%s)"), "\(facts.unread)"), enabled: facts.unread > 0,
            action: .clearBadge))
        let recent = facts.recent.prefix(recentLimit)
        if !recent.isEmpty {
            items.append(separator(5))
            for (index, alert) in recent.enumerated() {
                let title = String(alert.title.prefix(80))
                items.append(TrayMenuItem(
                    id: Int32(100 + index), label: (alert.unread ? "● " : "    ") + escapeMnemonic(title), enabled: alert.unread,
                    action: .acknowledge(alertID: alert.id)))
            }
            items.append(TrayMenuItem(id: 9, label: localize("Why it happened (timeline)…"), action: .showTimeline))
        }
        items += [separator(6), TrayMenuItem(id: 7, label: localize("Set up…"), action: .setUp),
                  TrayMenuItem(id: 8, label: localize("Quit CC Relay"), action: .quit)]
        return items
    }

    static func stateLine(_ facts: TrayFacts, localize: Localizer) -> String {
        switch facts.state {
        case .online: TextTemplate.fill(localize("Online (%s)"), facts.ip.isEmpty ? "?" : facts.ip)
        case .failing: localize("Keep-alives failing")
        case .loggingIn: localize("Logging in…")
        case .noNetwork: localize("No network")
        case .sleeping: localize("Asleep")
        case .unconfigured: localize("Not set up yet")
        case .loggedOut: localize("Logged out")
        case .offline: localize("Not logged in")
        }
    }

    private static func separator(_ id: Int32) -> TrayMenuItem { TrayMenuItem(id: id, label: "", isSeparator: true) }

    /// Menu labels treat `_` as the mnemonic marker: server text keeps its underscores.
    static func escapeMnemonic(_ text: String) -> String { text.replacing("_", with: "__") }

    /// `1 h 02 min`, `4 min 05 s`, `12 s`.
    static func clock(_ seconds: Int64, localize: Localizer) -> String {
        let s = max(0, seconds)
        let fill = TextTemplate.fill
        if s >= 3600 { return fill(localize("%s h %s min"), ["\(s / 3600)", format2(s % 3600 / 60)]) }
        if s >= 60 { return fill(localize("%s min %s s"), ["\(s / 60)", format2(s % 60)]) }
        return fill(localize("%s s"), ["\(s)"])
    }

    private static func format2(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
