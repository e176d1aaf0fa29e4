import Dispatch
import Relay
#if canImport(Glibc)
import Glibc
#endif

/// `ccrelay daemon`: keeps the session alive until SIGTERM or SIGINT.
enum DaemonCommand {
    static let usage = """
        Usage: ccrelay daemon [--config PATH]

        Logs in to the campus CC server and sends keep-alives every `interval`
        seconds, for as long as it runs; tells you through desktop notifications
        when the server logs you out, keep-alives fail, or the campus sends a
        notice. Normally started by systemd (systemctl --user enable --now ccrelay).
        Stops on SIGTERM or SIGINT (logging out first with logout-on-exit = true).

        Options:
          --config PATH  read this configuration instead of
                         $XDG_CONFIG_HOME/ccrelay/ccrelay.conf
          -h, --help     show this help

        Only one daemon runs per session: a second one names the process that owns
        io.github.ccrelay.CCRelay and exits with status 1.

        Exit status: 0 after a requested stop, 1 when it cannot start (the reason and
        the fix are printed), 2 on a usage error.
        """

    static let command = Subcommand(
        name: "daemon", summary: "keep this computer logged in (normally run by systemd)", usage: usage,
        valued: ["config"], values: ["config": Subcommand.fileValue], run: run)

    static func run(_ parsed: ParsedArguments) async -> Int32 {
        guard parsed.positionals.isEmpty else { return usageError("daemon", "unexpected argument '\(parsed.positionals[0])'") }
        let path = parsed.values["config"] ?? ConfigurationFile.defaultPath()
        let loaded = ConfigurationFile.load(path)
        for warning in loaded.warnings { Output.error("warning: \(warning)") }
        for error in loaded.errors { Output.error("error: \(error)") }
        guard let configuration = loaded.configuration else { return ExitStatus.failure }

        let daemon: Daemon
        do {
            daemon = try Daemon(configuration: configuration, version: ccrelayVersion) { Output.error($0) }
            try await daemon.start()
        } catch {
            Output.error("daemon: cannot start: \(error)")
            return ExitStatus.failure
        }
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        let sources = [SIGTERM, SIGINT].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: daemon.queue)
            source.setEventHandler { daemon.stop { exit(ExitStatus.ok) } }
            source.resume()
            return source
        }
        // Runs until a signal stops the daemon, which exits the process: the
        // continuation is kept (never resumed) for as long as the process lives.
        let parking = Parking()
        await withCheckedContinuation { parking.continuation = $0 }
        withExtendedLifetime((sources, parking)) {}
        return ExitStatus.ok
    }
}

/// Holds the main task's continuation while the daemon runs.
final class Parking: @unchecked Sendable {
    // Guard: written once, by the main task, before it suspends.
    var continuation: CheckedContinuation<Void, Never>?
}
