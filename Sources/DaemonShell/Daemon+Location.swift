import CCProtocol
import DesktopServices
import CCRelayCore
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's location state: the pure rules (`LocationTracker`) and the source they run.
struct DaemonLocation {
    var tracker: LocationTracker<LocationFix>
    var source: LocationSource?

    init(mode: Configuration.LocationMode) {
        tracker = LocationTracker(mode: mode)
    }
}

/// Location in the daemon: carries out what `LocationTracker` decides —
/// starting and stopping the source, posting and closing the location alert.
extension Daemon {
    /// The first source, when the configuration wants one from the start.
    func startLocation() { apply(location.tracker.start()) }

    /// The login said what the campus wants.
    func serverAsks(_ policy: ServerLocationPolicy) { apply(location.tracker.serverAsks(policy)) }

    /// A keep-alive goes out: the fix it carries (and a source with a problem is asked again).
    func fixForKeepAlive() -> LocationFix? {
        let (fix, effects) = location.tracker.keepAliveGoesOut(at: now(), interval: session.interval)
        apply(effects)
        return fix
    }

    /// A keep-alive was answered; `rejected` when with 428 (location required).
    func keepAliveLocation(rejected: Bool) { apply(location.tracker.keepAliveAnswered(rejected: rejected)) }

    /// For `ccrelay status`: off, waiting, ok, or the problem.
    var locationStatus: String { location.tracker.status }

    /// Stops the source (the daemon is stopping, or the bus it used went away).
    func stopLocation() {
        location.source?.stop()
        location.source = nil
        location.tracker.sourceStopped()
    }

    private func apply(_ effects: [LocationEffect]) {
        for effect in effects {
            switch effect {
            case .startSource:
                location.source = makeLocationSource()
                location.source?.start()
            case .stopSource:
                location.source?.stop()
                location.source = nil
            case .alert(let effect):
                apply([effect])
            }
        }
    }

    private func makeLocationSource() -> LocationSource {
        let report: (LocationReport<LocationFix>) -> Void = { [weak self] report in
            guard let self else { return }
            self.apply(self.location.tracker.reported(report, at: now()))
        }
        let portal =
            switch configuration.locationSource {
            case .portal: true
            case .geoclue: false
            case .auto: access("/.flatpak-info", F_OK) == 0
            }
        if portal, let connection = desktop.connection {
            log("location: asking the Location portal for fixes")
            return PortalLocation(loop: loop, connection: connection, log: log, report: report)
        }
        log("location: asking GeoClue for fixes")
        return GeoClueLocation(loop: loop, desktopID: ControlNames.busName, log: log, report: report)
    }
}
