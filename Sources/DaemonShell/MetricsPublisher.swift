import CoreVocabulary
import AlertJournal
import CCProtocol
import DesktopServices
import EventLoop
import FileAccess
import CCRelayCore
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's metrics (issue 36): what `GetStatus`' `metrics` entry says,
/// and the `[metrics] textfile` for the node exporter, written whole
/// (`AtomicFile`) when the core publishes a snapshot and `MetricsWritePolicy`
/// says so. It arms no timer and watches nothing: the daemon's wake-ups
/// stay the core's. A file that cannot be written is one log line for the
/// episode and a note in the status (`ccrelay status`), tried again at the
/// next change (at most once a minute for counters alone); the daemon carries on.
final class MetricsPublisher {
    private let textfile: AtomicFile?
    private let instance: String
    private let version: String
    private let openStore: () -> AlertStore?
    private let log: (String) -> Void
    private var policy = MetricsWritePolicy()
    /// The drops by cause, read from the timeline at the first need, then counted.
    private var tally: DropTally?
    private var state: DaemonState?
    private var stateChanged: Double?
    private var certificateExpiry: Double?
    /// Why the textfile cannot be written ("" when it can).
    private var problem = ""
    private var wrote = false
    /// The snapshot last looked at, without the times every keep-alive moves, and
    /// whether anything else the file shows (a drop, the certificate) changed since.
    private var lookedAt: DaemonSnapshot?
    private var changedApart = true
    /// The loop's wall clock.
    private let wallClock: () -> Double

    init(textfile: String?, instance: String, version: String, store: @escaping () -> AlertStore?,
         wallClock: @escaping () -> Double, log: @escaping (String) -> Void) {
        self.textfile = textfile.map(AtomicFile.init(path:))
        self.instance = instance
        self.version = version
        openStore = store
        self.wallClock = wallClock
        self.log = log
    }

    /// The core published `snapshot` at `now`: the textfile follows when it is due.
    func published(_ snapshot: DaemonSnapshot, at now: Instant) {
        if snapshot.state != state {
            state = snapshot.state
            stateChanged = wallClock().rounded()
        }
        guard let textfile else { return }
        // A keep-alive moves the deadline alone (a Srun check the account's traffic):
        // until the counters are due, nothing is built or compared.
        var steady = snapshot
        steady.deadline = nil
        steady.nextAttempt = nil
        steady.account = snapshot.account.map(MetricsFacts.steady)
        if steady == lookedAt, !changedApart, !policy.countersDue(at: now) { return }
        lookedAt = steady
        changedApart = false
        var status = DaemonStatus(snapshot, version: version, at: now, wallClock: wallClock())
        status.metrics = self.status(of: snapshot, at: now)
        let facts = MetricsFacts(status: status)
        guard policy.shouldWrite(facts, at: now) else { return }
        do {
            try textfile.write(MetricsText.render(facts))
            policy.attempted(facts, at: now, succeeded: true)
            wrote = true
            if !problem.isEmpty { log("metrics: \(textfile.path) is written again") }
            problem = ""
        } catch {
            policy.attempted(facts, at: now, succeeded: false)
            if problem.isEmpty {
                log("metrics: cannot write \(textfile.path): \(Self.explain(error, folder: textfile.folder)); "
                    + "tried again at the next change (at most once a minute)")
            }
            problem = "cannot write \(textfile.path): \(error.reason)"
        }
    }

    /// The timeline recorded `entry`: a drop out of `online` counts.
    func recorded(_ entry: TimelineEntry) {
        tally?.record(entry)
        changedApart = true
    }

    /// The certificate was looked at (daily, and when its file changes).
    func certificateInspected(secondsUntilExpiry: Int64) {
        certificateExpiry = (wallClock() + Double(secondsUntilExpiry)).rounded()
        changedApart = true
    }

    /// A credential file changed: the certificate's expiry is read again (without waiting for the daily look).
    func credentialFileChanged(_ configuration: Configuration?) {
        guard let configuration, let certificate = configuration.certificate,
            let facts = try? CredentialFiles.inspect(certificate: certificate, key: configuration.key, passphrase: configuration.bundlePassword,
                                                     localize: .english)
        else { return }
        certificateInspected(secondsUntilExpiry: facts.secondsUntilExpiry)
    }

    /// What `GetStatus`' `metrics` entry says for `snapshot` at `now`.
    func status(of snapshot: DaemonSnapshot, at now: Instant) -> MetricsStatus {
        if tally == nil, let store { tally = (try? store.dropsByCause()).map(DropTally.init(causes:)) }
        let expires = snapshot.deadline.map { deadline in
            let left = deadline - now
            // Whole seconds, as the text has them: a keep-alive that moves it less changes nothing.
            return (wallClock() + Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18).rounded()
        }
        return MetricsStatus(
            instance: instance, stateChanged: stateChanged, sessionExpires: expires, certificateExpiry: certificateExpiry,
            drops: tally?.counts, textfile: textfile?.path ?? "", problem: problem)
    }

    /// The daemon stops: its series go with it (the node exporter serves no stale "online").
    func stopped() {
        guard wrote, let textfile else { return }
        textfile.remove()
        wrote = false
        policy.reset()
        lookedAt = nil
    }

    private var store: AlertStore? { openStore() }

    /// The failure in words that say what to do.
    static func explain(_ error: SystemError, folder: String) -> String {
        switch error.errno {
        case EACCES, EPERM:
            "\(error.reason): this daemon's user may not write in \(folder) (for the system service: sudo setfacl -m u:ccrelay:rwx \(folder))"
        case EROFS:
            "\(error.reason): the system service writes only where ReadWritePaths= allows (sudo systemctl edit ccrelay: ReadWritePaths=\(folder))"
        case ENOENT: "\(error.reason): there is no folder \(folder) (is prometheus-node-exporter installed?)"
        default: error.description
        }
    }
}
