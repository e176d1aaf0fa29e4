import Dispatch
import Relay
import RelayDaemon
#if canImport(Glibc)
import Glibc
#endif

// The daemon process: `ccrelay daemon` checks the command line and execs
// this with `--config PATH`. Kept apart from the CLI so that libcurl and its
// dependencies load only here, not in every `ccrelay status`.
//
// No async/await and no global queues on the daemon's steady path: either
// starts libdispatch's worker-pool monitor, a timer that wakes the process
// every second for as long as it lives.

/// A line on standard error, prefixed like every ccrelay message (journald keeps it).
@Sendable func log(_ text: String) {
    let line = "ccrelay: " + text + "\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
}

/// Loads the configuration and starts the daemon; it then runs on its queue
/// until SIGTERM or SIGINT, which exit the process.
func runDaemon(_ arguments: [String]) -> Never {
    let path: String
    switch arguments.count {
    case 0: path = ConfigurationFile.defaultPath()
    case 2 where arguments[0] == "--config": path = arguments[1]
    default:
        log("ccrelay-daemon is started by 'ccrelay daemon [--config PATH]'; see 'ccrelay daemon --help'")
        exit(2)
    }
    let loaded = ConfigurationFile.load(path)
    for warning in loaded.warnings { log("warning: \(warning)") }
    for error in loaded.errors { log("error: \(error)") }
    guard let configuration = loaded.configuration else { exit(1) }

    let daemon: Daemon
    do {
        daemon = try Daemon(configuration: configuration, version: ccrelayVersion, log: log)
    } catch {
        log("daemon: cannot start: \(error)")
        exit(1)
    }
    let stopSignals: StopSignals
    do {
        stopSignals = try StopSignals(queue: daemon.queue) { daemon.stop { exit(0) } }
    } catch {
        log("daemon: cannot start: \(error)")
        exit(1)
    }
    daemon.start { error in
        guard let error else { return }
        log("daemon: cannot start: \(error)")
        exit(1)
    }
    // The main thread only waits (with the stop signals still blocked, unlike
    // dispatchMain, whose main thread waits with every signal open).
    while true { withExtendedLifetime(stopSignals) { _ = sleep(UInt32.max) } }
}

// Before any thread exists, so that every thread inherits the blocked mask.
StopSignals.block()
Localization.setUp()
runDaemon(Array(CommandLine.arguments.dropFirst()))
