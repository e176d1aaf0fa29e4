import Dispatch
import Relay
import RelayDaemon
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

// The daemon process: `ccrelay daemon` checks the command line and execs
// this with `--config PATH`; `ccrelay config check` execs it with `--check`,
// so that both run the same checks. Kept apart from the CLI so that libcurl
// and its dependencies load only here, not in every `ccrelay status`.
//
// No async/await and no global queues on the daemon's steady path: either
// starts libdispatch's worker-pool monitor, a timer that wakes the process
// every second for as long as it lives.

/// A line on standard error, prefixed like every ccrelay message (journald keeps it).
@Sendable func log(_ text: String) {
    let line = "ccrelay: " + text + "\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
}

/// What SIGTERM and SIGINT stop: the daemon once it runs; before that
/// (reading the configuration, connecting to the bus) the process ends at once.
let running = Mutex<Daemon?>(nil)

func stop() {
    guard let daemon = running.withLock({ $0 }) else {
        log("stopped while starting")
        _exit(0)
    }
    daemon.stop { exit(0) }
}

/// Prints every problem of the configuration at `path` the way
/// `ccrelay config check` promises; exit status 0 when the daemon would start.
func check(_ path: String) -> Never {
    let loaded = ConfigurationCheck.load(path)
    for warning in loaded.warnings { log("warning: \(warning)") }
    for error in loaded.errors { log("error: \(error)") }
    guard loaded.configuration != nil else { exit(1) }
    let line = "\(path): ok\n"
    _ = line.withCString { write(1, $0, strlen($0)) }
    exit(0)
}

/// Loads the configuration and starts the daemon; it then runs on its queue
/// until SIGTERM or SIGINT, which exit the process.
func runDaemon(_ arguments: [String]) -> Never {
    let path: String
    switch arguments.count {
    case 0: path = ConfigurationFile.defaultPath()
    case 2 where arguments[0] == "--config": path = arguments[1]
    case 3 where arguments[0] == "--check" && arguments[1] == "--config": check(arguments[2])
    default:
        log("ccrelay-daemon is started by 'ccrelay daemon [--config PATH]'; see 'ccrelay daemon --help'")
        exit(2)
    }
    let loaded = ConfigurationCheck.load(path)
    for warning in loaded.warnings { log("warning: \(warning)") }
    for error in loaded.errors { log("error: \(error)") }
    guard let configuration = loaded.configuration else { exit(1) }

    let daemon: Daemon
    do {
        daemon = try Daemon(configuration: configuration, configurationPath: path, version: ccrelayVersion, log: log)
    } catch {
        log("daemon: cannot start: \(error)")
        exit(1)
    }
    daemon.start { error in
        if let error {
            log("daemon: cannot start: \(error)")
            exit(1)
        }
        running.withLock { $0 = daemon }
    }
    // The main thread only waits (with the stop signals still blocked, unlike
    // dispatchMain, whose main thread waits with every signal open).
    while true { _ = sleep(UInt32.max) }
}

// Before any thread exists, so that every thread inherits the blocked mask;
// then read from a signalfd on a queue of their own from the first moment,
// so that a stop request is never left waiting behind a slow start.
StopSignals.block()
let stopSignals: StopSignals
do {
    stopSignals = try StopSignals(queue: DispatchQueue(label: "ccrelay.signals"), handler: stop)
} catch {
    log("daemon: cannot start: \(error)")
    exit(1)
}
Localization.setUp()
withExtendedLifetime(stopSignals) { runDaemon(Array(CommandLine.arguments.dropFirst())) }
