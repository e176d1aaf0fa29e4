import CoreVocabulary
/// Why the session dropped out of `online`, as the `cause` label of
/// `ccrelay_drops_total`: a fixed, small set read from the timeline's
/// causes (`TimelineCause`'s words, which carry interface names, server
/// text and addresses no label may hold). Its raw values are stable names.
public enum DropCause: String, Sendable, Hashable, CaseIterable {
    /// The server ended the session: kicked, by an administrator, the quota used up, logged in elsewhere, its deadline passed.
    case kicked
    case admin
    case quotaExhausted = "quota-exhausted"
    case onlineElsewhere = "online-elsewhere"
    case expired
    /// A Srun portal's check found the session gone (the portal never says why).
    case portalEnded = "portal-ended"
    /// The server ended it for a reason this version does not know.
    case endedByServer = "ended-by-server"
    /// The server refused a keep-alive (its credentials, say).
    case refused
    case rateLimited = "rate-limited"
    /// A keep-alive went unanswered or failed in transit.
    case keepaliveFailed = "keepalive-failed"
    /// The server could not be verified (TLS).
    case untrusted
    /// The network (link, route, NetworkManager) went away.
    case noNetwork = "no-network"
    case sleep
    /// The user logged out (the CLI, a bubble, the tray).
    case userLogout = "user-logout"
    case daemonStopped = "daemon-stopped"
    /// A keep-alive or retry fell due and the session could not go on.
    case deadline
    case other

    /// The label for a timeline cause (`TimelineEntry.cause`).
    public init(timelineCause cause: String) {
        if let reason = Self.between(cause, "the server ended the session (", ")") {
            self =
                switch LogoutReason(wire: reason) {
                case .kicked: .kicked
                case .admin: .admin
                case .quotaExhausted: .quotaExhausted
                case .onlineElsewhere: .onlineElsewhere
                case .expired: .expired
                case .requested: .userLogout
                case .portalEnded: .portalEnded
                case .other: .endedByServer
                }
            return
        }
        let prefixes: [(String, DropCause)] = [
            ("keep-alive refused", .refused), ("keep-alive: the server asked to slow down", .rateLimited),
            ("keep-alive failed", .keepaliveFailed), ("keep-alive: no network", .noNetwork),
            ("keep-alive: the server could not be verified", .untrusted), ("the network went down", .noNetwork),
            ("NetworkManager", .noNetwork), ("the machine went to sleep", .sleep), ("the user asked to log out", .userLogout),
            ("the user clicked logout", .userLogout), ("the daemon stopped", .daemonStopped), ("a keep-alive or retry fell due", .deadline),
        ]
        self = prefixes.first { cause.hasPrefix($0.0) }?.1 ?? .other
    }

    private static func between(_ text: String, _ start: String, _ end: String) -> String? {
        guard text.hasPrefix(start), text.hasSuffix(end), text.count >= start.count + end.count else { return nil }
        return String(text.dropFirst(start.count).dropLast(end.count))
    }
}

/// The drops out of `online` by cause label: read from the timeline when
/// the daemon starts (so that they survive restarts), then counted as it
/// records each change. Within a run the counts only grow.
public struct DropTally: Sendable, Hashable {
    public private(set) var counts: [String: Int] = [:]

    /// The tally of timeline causes and how often each ended an `online` stretch.
    public init(causes: [String: Int] = [:]) {
        for (cause, count) in causes { counts[DropCause(timelineCause: cause).rawValue, default: 0] += count }
    }

    /// Counts `entry` when it is a drop out of `online`.
    public mutating func record(_ entry: TimelineEntry) {
        guard Self.isDrop(entry) else { return }
        counts[DropCause(timelineCause: entry.cause).rawValue, default: 0] += 1
    }

    /// A change of state out of `online` (as `TimelineSummary` counts drops).
    public static func isDrop(_ entry: TimelineEntry) -> Bool {
        entry.subject == .state && entry.from == DaemonState.online.rawValue && entry.to != DaemonState.online.rawValue
    }
}
