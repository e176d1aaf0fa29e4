import CCProtocol
import Relay
import RelayCore
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's location bookkeeping (on its loop).
struct DaemonLocation {
    var need: LocationNeed
    var source: LocationSource?
    /// The newest fix, and since when the source has stopped confirming it.
    var fix: LocationFix?
    var lostAt: Instant?
    var problem: LocationProblem?
    /// Only an approximate location is allowed: a problem that fixes do not clear.
    var approximateOnly = false
    var alerting = LocationAlerting()
    /// Keep-alives answered 428 (location required) in a row.
    var rejections = 0
    /// The running source has reported something (a fix or a problem) since it started.
    var sourceAnswered = false

    init(mode: Configuration.LocationMode) {
        need = LocationNeed(mode: mode, server: .none)
    }
}

/// Location in the daemon: a source runs only while fixes are needed
/// (`[location] mode` and what the server asked at login or with a 428), the
/// newest fix goes with each keep-alive while it is current, and problems
/// become the location alerts when they matter.
extension Daemon {
    /// Starts or stops the source to match the need, and brings the alert in line.
    func updateLocation() {
        if location.need.sendsFixes && location.source == nil {
            location.source = makeLocationSource()
            location.sourceAnswered = false
            location.source?.start()
        } else if !location.need.sendsFixes, let source = location.source {
            source.stop()
            location.source = nil
            location.fix = nil
            location.lostAt = nil
            location.problem = nil
            location.approximateOnly = false
        }
        // The server refused twice for want of a fix the source never gave: say so.
        let problem = currentLocationProblem ?? (location.rejections >= 2 ? .tooCoarse(.stopped) : nil)
        apply(location.alerting.update(problem: problem, need: location.need))
    }

    private func makeLocationSource() -> LocationSource {
        let report: (LocationReport) -> Void = { [weak self] in self?.locationReported($0) }
        let portal =
            switch configuration.locationSource {
            case .portal: true
            case .geoclue: false
            case .auto: access("/.flatpak-info", F_OK) == 0
            }
        log("location: asking \(portal ? "the Location portal" : "GeoClue") for fixes")
        return portal
            ? PortalLocation(loop: loop, connection: bus, log: log, report: report)
            : GeoClueLocation(loop: loop, desktopID: ControlNames.busName, log: log, report: report)
    }

    private func locationReported(_ report: LocationReport) {
        location.sourceAnswered = true
        switch report {
        case .fix(let fix):
            location.fix = fix
            location.lostAt = nil
            location.problem = nil
        case .problem(let problem):
            location.problem = problem
            if location.lostAt == nil { location.lostAt = BootTimer.now() }
        case .approximateOnly(let approximate):
            location.approximateOnly = approximate
        }
        updateLocation()
    }

    /// The fix to send with the next keep-alive: none when not needed, and
    /// none once the source has been silent for three intervals.
    var fixForKeepAlive: LocationFix? {
        guard location.need.sendsFixes, let fix = location.fix else { return nil }
        if let lost = location.lostAt, BootTimer.now() - lost > session.interval * 3 { return nil }
        return fix
    }

    /// The login said what the campus wants.
    func serverAsks(_ policy: ServerLocationPolicy) {
        location.need.server = policy
        location.rejections = 0
        updateLocation()
    }

    /// A keep-alive was answered: 428 makes location required (and starts a
    /// source to get a fix for the retry); an accepted one clears the count.
    func keepAliveLocation(rejected: Bool) {
        if rejected {
            location.need.server = .required
            // A refusal counts towards the alert only once the running source has
            // had its say (a fix or a problem): a source still starting — also one
            // started again after a problem — gets the next retry.
            if location.sourceAnswered { location.rejections += 1 }
        } else if location.rejections > 0 {
            location.rejections = 0
        } else {
            return
        }
        updateLocation()
    }

    /// For `ccrelay status`: off, waiting, ok, or the problem.
    var locationStatus: String {
        guard location.need.sendsFixes else { return "off" }
        if let problem = currentLocationProblem { return problem.statusName }
        return location.fix == nil ? "waiting" : "ok"
    }

    /// A source that reported a problem is asked again with each keep-alive
    /// (no timer of its own): permission given back is noticed within an
    /// interval, and its alert closed.
    func retryLocationAfterProblem() {
        guard currentLocationProblem != nil, location.source != nil else { return }
        stopLocation()
        updateLocation()
    }

    /// What stands in the way now: the source's last problem, or an approximate-only grant.
    private var currentLocationProblem: LocationProblem? {
        location.problem ?? (location.approximateOnly ? .tooCoarse(.approximate) : nil)
    }

    /// Stops the source (the daemon is stopping, or the bus it used went away).
    func stopLocation() {
        location.source?.stop()
        location.source = nil
    }
}
