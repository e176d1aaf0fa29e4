/// What the daemon is doing, as users see it (`ccrelay status`, `GetStatus`,
/// the `State` property, the tray): the session's state, or `unconfigured`
/// while there is no usable configuration. Its raw value is the wire name;
/// strings appear only at the D-Bus and JSON edges.
public enum DaemonState: String, Sendable, Hashable, CaseIterable {
    case offline
    case loggingIn = "logging-in"
    case online
    case failing
    case loggedOut = "logged-out"
    case noNetwork = "no-network"
    case sleeping
    case unconfigured

    public init(_ session: SessionState) {
        switch session {
        case .offline: self = .offline
        case .loggingIn: self = .loggingIn
        case .online: self = .online
        case .failing: self = .failing
        case .loggedOut: self = .loggedOut
        case .noNetwork: self = .noNetwork
        case .sleeping: self = .sleeping
        }
    }

    /// The state a wire name stands for; one this version does not know (a newer daemon's) is `offline`.
    public init(wireName: String) { self = DaemonState(rawValue: wireName) ?? .offline }
}
