import CoreVocabulary

/// What a location source reports (GeoClue or the portal); `Fix` is the
/// wire's fix type, which the core only carries.
public enum LocationReport<Fix: Sendable & Hashable>: Sendable, Hashable {
    case fix(Fix)
    case problem(LocationProblem)
    /// Whether only an approximate location is allowed (reported on each start;
    /// it outlasts the coarse fixes that keep arriving).
    case approximateOnly(Bool)
}

/// What the location bookkeeping asks of the shell.
public enum LocationEffect: Sendable, Hashable {
    /// Start a location source (none runs).
    case startSource
    /// Stop the running source.
    case stopSource
    /// An alert to post or close, as the session's effects.
    case alert(SessionEffect)
}

/// The daemon's location rules, pure and driven by events like `Session`:
/// a source runs only while fixes are needed (`[location] mode` and what the
/// server asked at login or with a 428); the newest fix goes with each
/// keep-alive until the source has been silent for three intervals; a source
/// that reported a problem is started again with each keep-alive (permission
/// given back is noticed within an interval); a 428 makes location required,
/// and two in a row that the running source could not answer raise the alert.
public struct LocationTracker<Fix: Sendable & Hashable>: Sendable {
    public private(set) var need: LocationNeed
    /// The newest fix, and since when the source has stopped confirming it.
    public private(set) var fix: Fix?
    private var lostAt: Instant?
    private var problem: LocationProblem?
    /// Only an approximate location is allowed: a problem that fixes do not clear.
    private var approximateOnly = false
    private var alerting = LocationAlerting()
    /// Keep-alives answered 428 (location required) in a row.
    public private(set) var rejections = 0
    private var running = false
    /// The running source has reported something (a fix or a problem) since it started.
    private var sourceAnswered = false

    public init(mode: Configuration.LocationMode) {
        need = LocationNeed(mode: mode, server: .none)
    }

    /// The daemon starts: a source when `mode` wants one from the start.
    public mutating func start() -> [LocationEffect] { update() }

    /// The login said what the campus wants.
    public mutating func serverAsks(_ policy: ServerLocationPolicy) -> [LocationEffect] {
        need.server = policy
        rejections = 0
        return update()
    }

    /// The source reported (at `now`).
    public mutating func reported(_ report: LocationReport<Fix>, at now: Instant) -> [LocationEffect] {
        guard running else { return [] }
        sourceAnswered = true
        switch report {
        case .fix(let newFix):
            fix = newFix
            lostAt = nil
            problem = nil
        case .problem(let newProblem):
            problem = newProblem
            if lostAt == nil { lostAt = now }
        case .approximateOnly(let approximate):
            approximateOnly = approximate
        }
        return update()
    }

    /// A keep-alive goes out at `now` with keep-alives every `interval`: the
    /// fix to send (none when not needed, none once the source has been silent
    /// for three intervals), and a source with a problem is asked again.
    public mutating func keepAliveGoesOut(at now: Instant, interval: Duration) -> (fix: Fix?, effects: [LocationEffect]) {
        var effects: [LocationEffect] = []
        if currentProblem != nil && running {
            effects.append(.stopSource)
            running = false
            effects += update()
        }
        return (fixToSend(at: now, interval: interval), effects)
    }

    /// The fix a keep-alive at `now` carries.
    public func fixToSend(at now: Instant, interval: Duration) -> Fix? {
        guard need.sendsFixes, let fix else { return nil }
        if let lostAt, now - lostAt > interval * 3 { return nil }
        return fix
    }

    /// A keep-alive was answered: 428 (`rejected`) makes location required
    /// (and starts a source to get a fix for the retry); an accepted one clears the count.
    public mutating func keepAliveAnswered(rejected: Bool) -> [LocationEffect] {
        if rejected {
            need.server = .required
            // A refusal counts towards the alert only once the running source has
            // had its say (a fix or a problem): a source still starting — also one
            // started again after a problem — gets the next retry.
            if sourceAnswered { rejections += 1 }
        } else if rejections > 0 {
            rejections = 0
        } else {
            return []
        }
        return update()
    }

    /// The shell stopped the source by itself (the daemon stops, or the bus it used went away); `start` starts one again.
    public mutating func sourceStopped() {
        running = false
    }

    /// For `ccrelay status`: off, waiting, ok, or the problem.
    public var status: String {
        guard need.sendsFixes else { return "off" }
        if let problem = currentProblem { return problem.statusName }
        return fix == nil ? "waiting" : "ok"
    }

    /// What stands in the way now: the source's last problem, or an approximate-only grant.
    private var currentProblem: LocationProblem? {
        problem ?? (approximateOnly ? .tooCoarse(.approximate) : nil)
    }

    /// Starts or stops the source to match the need, and brings the alert in line.
    private mutating func update() -> [LocationEffect] {
        var effects: [LocationEffect] = []
        if need.sendsFixes && !running {
            running = true
            sourceAnswered = false
            effects.append(.startSource)
        } else if !need.sendsFixes && running {
            running = false
            effects.append(.stopSource)
            fix = nil
            lostAt = nil
            problem = nil
            approximateOnly = false
        }
        // The server refused twice for want of a fix the source never gave: say so.
        let shown = currentProblem ?? (rejections >= 2 ? .tooCoarse(.stopped) : nil)
        effects += alerting.update(problem: shown, need: need).map(LocationEffect.alert)
        return effects
    }
}
