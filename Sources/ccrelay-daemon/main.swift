import Dispatch
import Relay
import RelayDaemon
#if canImport(Glibc)
import Glibc
#endif

// The daemon process: `ccrelay daemon` checks the command line and execs
// this with `--config PATH`. Kept apart from the CLI so that libcurl and its
// dependencies load only here, not in every `ccrelay status`.

/// A line on standard error, prefixed like every ccrelay message (journald keeps it).
@Sendable func log(_ text: String) {
    let line = "ccrelay: " + text + "\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
}

/// Loads the configuration, starts the daemon, and runs until SIGTERM or SIGINT.
func runDaemon(_ arguments: [String]) async -> Int32 {
    let path: String
    switch arguments.count {
    case 0: path = ConfigurationFile.defaultPath()
    case 2 where arguments[0] == "--config": path = arguments[1]
    default:
        log("ccrelay-daemon is started by 'ccrelay daemon [--config PATH]'; see 'ccrelay daemon --help'")
        return 2
    }
    let loaded = ConfigurationFile.load(path)
    for warning in loaded.warnings { log("warning: \(warning)") }
    for error in loaded.errors { log("error: \(error)") }
    guard let configuration = loaded.configuration else { return 1 }

    let daemon: Daemon
    do {
        daemon = try Daemon(configuration: configuration, version: ccrelayVersion, log: log)
        try await daemon.start()
    } catch {
        log("daemon: cannot start: \(error)")
        return 1
    }
    signal(SIGTERM, SIG_IGN)
    signal(SIGINT, SIG_IGN)
    let sources = [SIGTERM, SIGINT].map { number in
        let source = DispatchSource.makeSignalSource(signal: number, queue: daemon.queue)
        source.setEventHandler { daemon.stop { exit(0) } }
        source.resume()
        return source
    }
    // The daemon runs on its queue until a signal stops it, which exits the
    // process: the main task waits on a continuation that is never resumed.
    let parking = Parking()
    await withCheckedContinuation { parking.continuation = $0 }
    withExtendedLifetime((sources, parking)) {}
    return 0
}

/// Holds the main task's continuation while the daemon runs.
final class Parking: @unchecked Sendable {
    // Guard: written once, by the main task, before it suspends.
    var continuation: CheckedContinuation<Void, Never>?
}

Localization.setUp()
exit(await runDaemon(Array(CommandLine.arguments.dropFirst())))
