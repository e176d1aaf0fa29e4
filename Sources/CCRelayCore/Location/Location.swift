/// What stands between the daemon and a usable location fix.
public enum LocationProblem: Sendable, Hashable {
    case denied(LocationDenial)
    case off(LocationOff)
    case tooCoarse(LocationTooCoarse)

    /// The alert that tells the user.
    public var subject: AlertSubject {
        switch self {
        case .denied(let denial): .locationDenied(denial)
        case .off(let off): .locationOff(off)
        case .tooCoarse(let problem): .locationTooCoarse(problem)
        }
    }

    /// A short name for `ccrelay status`.
    public var statusName: String {
        switch self {
        case .denied: "denied"
        case .off(.disabled): "disabled"
        case .off(.unavailable): "unavailable"
        case .tooCoarse(.approximate): "too-coarse"
        case .tooCoarse(.stopped): "stopped"
        }
    }
}

/// What the campus asked for at login (`location` in the login reply).
public enum ServerLocationPolicy: String, Sendable, Hashable {
    case none, optional, required
}

/// When location is used, from `[location] mode` and the server's policy:
/// a fix is looked for and sent when the server asked for one (`auto`) or
/// always (`always`); the user is alerted about a problem only when the
/// server requires a fix or the user set `always`.
public struct LocationNeed: Sendable, Hashable {
    public var mode: Configuration.LocationMode
    public var server: ServerLocationPolicy

    public init(mode: Configuration.LocationMode, server: ServerLocationPolicy) {
        self.mode = mode
        self.server = server
    }

    /// A location client should run and fixes go with keep-alives.
    public var sendsFixes: Bool {
        switch mode {
        case .off: false
        case .auto: server != .none
        case .always: true
        }
    }

    /// A location problem is worth an alert.
    public var alertsOnProblems: Bool {
        switch mode {
        case .off: false
        case .auto: server == .required
        case .always: true
        }
    }
}

/// The one location alert: posted when a problem matters, replaced when the
/// problem changes, closed when it goes away (closing does not acknowledge
/// it, so the badge stays). Pure, like `Session`.
public struct LocationAlerting: Sendable {
    public private(set) var shown: AlertSubject?

    public init() {}

    /// The effects that bring the alert in line with `problem`.
    public mutating func update(problem: LocationProblem?, need: LocationNeed) -> [SessionEffect] {
        let wanted = need.alertsOnProblems ? problem?.subject : nil
        guard wanted != shown else { return [] }
        var effects: [SessionEffect] = []
        if let shown, shown.kind != wanted?.kind { effects.append(.close(shown.kind)) }
        if let wanted { effects.append(.post(wanted)) }
        shown = wanted
        return effects
    }
}
