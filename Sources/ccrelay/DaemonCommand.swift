import DBus
import DBusAsync
import DesktopServices
import DispatchLoop
import EventLoop
#if canImport(Glibc)
import Glibc
#endif

/// `ccrelay daemon`: checks the command line, then becomes the daemon by
/// exec'ing `ccrelay-daemon` (same process, so systemd's notify socket,
/// watchdog and signals reach it unchanged).
enum DaemonCommand {
    static let usage = localize("""
        Usage: ccrelay daemon [--config PATH] [--autostart]
               ccrelay --system daemon [--config PATH]

        Logs in to the campus CC server and sends keep-alives every `interval`
        seconds, for as long as it runs; tells you through desktop notifications
        when the server logs you out, keep-alives fail, or the campus sends a
        notice. Normally started by systemd (systemctl --user enable --now ccrelay).
        Stops on SIGTERM or SIGINT (logging out first with logout-on-exit = true).
        Restarted while the server's session is still valid, it carries on with that
        session instead of logging in again.

        Only one daemon runs per session: a second one names the process that owns
        io.github.ccrelay.CCRelay and exits with status 1. Without a usable
        configuration it stays up in the state `unconfigured` (ccrelay status says
        what to fix) and starts the moment the file is usable; without a session
        bus as well, it prints the problems and exits with status 1.

        Options:
          --config PATH  read this configuration instead of
                         $XDG_CONFIG_HOME/ccrelay/ccrelay.conf
          --autostart    as the desktop's autostart entry runs it at login: nothing
                         when a daemon already runs, or when no configuration
                         exists and setup was offered once already (the first
                         login after installing offers it, with a bubble);
                         else the systemd user unit when systemd can start it (so
                         it runs once, under systemd, on every desktop), else the
                         daemon itself
          -h, --help     show this help

        With ccrelay --system it is the system service (the ccrelay.service system
        unit runs it as the user ccrelay): no desktop session, the control API on the
        system bus, the configuration in /etc/ccrelay/ccrelay.conf (or
        $CONFIGURATION_DIRECTORY), the journal in /var/lib/ccrelay (or
        $STATE_DIRECTORY), alerts to the system log (critical ones at priority crit)
        and the [relay] targets, a password from the systemd credential
        campus-password or [auth] password-file.

        Exit status: 0 after a requested stop, 1 when it cannot start (the reason and
        the fix are printed), 2 on a usage error.
        """)

    static let command = Subcommand(
        name: "daemon", summary: localize("keep this computer logged in (normally run by systemd)"), usage: usage,
        flags: ["autostart"], valued: ["config"], values: ["config": Subcommand.fileValue], run: run)

    static func run(_ parsed: ParsedArguments) async -> Int32 {
        if parsed.has("autostart"), !CLI.systemService, parsed.positionals.isEmpty {
            // Without a configuration the daemon runs once, to offer setup; after that, nothing.
            let path = parsed.values["config"] ?? ConfigurationFile.defaultPath()
            if access(path, F_OK) != 0 && access(SetupOffer.markerPath, F_OK) == 0 { return ExitStatus.ok }
            if await daemonRuns() { return ExitStatus.ok }
            if parsed.values["config"] == nil, systemctlUser(["start", "ccrelay.service"]) { return ExitStatus.ok }
        }
        return becomeTheDaemon(parsed)
    }

    /// Checks the command line and execs `ccrelay-daemon`; returns only when
    /// it cannot. Synchronous, so that `main` runs it before any Swift task
    /// (see `CLI.runBeforeTasks`).
    static func becomeTheDaemon(_ parsed: ParsedArguments) -> Int32 {
        guard parsed.positionals.isEmpty else { return usageError("daemon", "unexpected argument '\(parsed.positionals[0])'") }
        if CLI.systemService {
            // The system service (ccrelay.service): /etc/ccrelay, /var/lib/ccrelay, the system bus.
            guard !parsed.has("autostart") else { return usageError("daemon", "--autostart is for a desktop session, not --system") }
            return execHelper(
                "ccrelay-daemon",
                ["--system"] + (CLI.instance.map { ["--instance", $0] } ?? [])
                    + ["--config", parsed.values["config"] ?? SystemService.configurationPath(instance: CLI.instance)], for: "daemon")
        }
        return execHelper("ccrelay-daemon", ["--config", parsed.values["config"] ?? ConfigurationFile.defaultPath()], for: "daemon")
    }

    /// A daemon owns the control name on the session bus already.
    private static func daemonRuns() async -> Bool {
        guard let connection = try? Connection(bus: .session, loop: DispatchScheduler(label: "ccrelay.autostart")) else {
            return false
        }
        defer { connection.loop.sync { connection.close() } }
        return ((try? await connection.nameOwner(ControlNames.busName)) ?? nil) != nil
    }
}
