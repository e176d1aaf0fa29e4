/// The states of docs/contracts.md, with their fixed names: what the daemon is
/// doing, as users see it (`ccrelay status`, `GetStatus`, the `State`
/// property, the tray). `Session` moves between all but `unconfigured`, the
/// state of a daemon without a usable configuration. Its raw value is the
/// wire name; strings appear only at the D-Bus and JSON edges.
public enum DaemonState: String, Sendable, Hashable, CaseIterable {
    case offline
    case loggingIn = "logging-in"
    case online
    case failing
    case loggedOut = "logged-out"
    case noNetwork = "no-network"
    case sleeping
    case unconfigured

    /// The state a wire name stands for; one this version does not know (a newer daemon's) is `offline`.
    public init(wireName: String) { self = DaemonState(rawValue: wireName) ?? .offline }
}
