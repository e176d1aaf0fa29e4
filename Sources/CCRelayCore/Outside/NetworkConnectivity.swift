/// What NetworkManager's own check says of the way out (its `Connectivity`
/// property, `NMConnectivityState`). Its check URLs are often hosted abroad,
/// so it is a second opinion beside the daemon's probe: a change of it calls
/// for a check, and a portal it found names a way out the probe saw blocked.
public enum NetworkConnectivity: UInt32, Sendable, Hashable, CaseIterable {
    /// Not checked, or checking is turned off in NetworkManager.
    case unknown = 0
    /// No network.
    case none = 1
    /// A captive portal answers in place of the internet.
    case portal = 2
    /// Connected, but the internet does not answer.
    case limited = 3
    /// The internet answers.
    case full = 4

    /// The word users see (`NetworkManager: portal`).
    public var name: String {
        switch self {
        case .unknown: "unknown"
        case .none: "none"
        case .portal: "portal"
        case .limited: "limited"
        case .full: "full"
        }
    }
}
