import CCRelayCore
import CoreVocabulary
import DesktopServices

/// A subcommand: its name, one line for the overview, its usage text, the
/// options it accepts, and what runs it. The same table drives parsing,
/// `--help` and the shell completions.
struct Subcommand: Sendable {
    var name: String
    var summary: String
    var usage: String
    /// Options without a value (`--json`) and with one (`--limit N`), without dashes.
    var flags: [String] = []
    var valued: [String] = []
    /// Words the first positional argument may be (completions; the command checks them).
    var words: [String] = []
    /// Completions for option values: a list of words, or `fileValue` for a path.
    var values: [String: [String]] = [:]
    var run: @Sendable (ParsedArguments) async -> Int32

    /// In `values`: the option takes a file name.
    static let fileValue = ["<file>"]
}

/// The command table and the top-level dispatch of `ccrelay`.
enum CLI {
    static let subcommands: [Subcommand] = [
        DaemonCommand.command, SetupCommand.command, StatusCommand.command, ShowCommand.command, BadgeCommand.command, HistoryCommand.command,
        TimelineCommand.command, MetricsCommand.command,
        LoginCommand.command, LogoutCommand.command, NotifyTestCommand.command, ConfigCommand.command, RelayCommand.command,
        DoctorCommand.command, CompletionsCommand.command, DemoCommand.command,
    ]

    static var overview: String {
        let head = localize("""
            Usage: ccrelay [--system[=INSTANCE]] <command> [options]
                   ccrelay --help | --version

            ccrelay keeps this computer logged in to the campus CC server and tells you
            through desktop notifications when it cannot.

            Commands:
            """)
        let tail = localize("""
            Run 'ccrelay <command> --help' for a command's options. With --system, a
            command reads and steers the system service (ccrelay.service, for a machine
            without a desktop) instead of this session's daemon, with --system=NAME the
            instance ccrelay@NAME.service; without it, a command that finds no daemon in
            this session asks the system service, saying so.

            Exit status: 0 ok, 1 failure, 2 usage error, 3 the daemon is not running
            (for commands that need it).
            """)
        return head + "\n" + subcommands.map { "  " + padded($0.name, 13) + $0.summary }.joined(separator: "\n") + "\n\n" + tail + "\n\n"
            + manualPointer
    }

    /// The last line of every help: where the reference is (issue 35).
    static var manualPointer: String {
        localize("Manual: man ccrelay (every command, option and error code), man ccrelay.conf (every configuration key).")
    }

    /// `text` and spaces up to `width` columns of a terminal (a Chinese
    /// character takes two), at least one space.
    static func padded(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(1, width - DisplayWidth.columns(text)))
    }

    /// `ccrelay --system …`: the system service (ccrelay.service) — its bus,
    /// its configuration and its journal — instead of this session's daemon;
    /// `--system=NAME`, the instance ccrelay@NAME.service.
    static let systemService = CommandLine.arguments.dropFirst().first.map { $0 == "--system" || $0.hasPrefix("--system=") } ?? false
    static let instance: String? = CommandLine.arguments.dropFirst().first.flatMap {
        $0.hasPrefix("--system=") ? String($0.dropFirst("--system=".count)) : nil
    }

    /// `ccrelay daemon` (but for a desktop's --autostart) becomes the daemon
    /// before `main` starts its first Swift task: a task's first hop to the
    /// global executor starts libdispatch's worker threads, whose raised
    /// priority a service's sandbox refuses — three "Failed to set thread
    /// priority" lines in its journal at every start (issue 33.7). Nil: any
    /// other command, run as a task.
    static func runBeforeTasks(_ given: [String]) -> Int32? {
        if let instance, !SystemService.isInstanceName(instance) { return nil }
        let arguments = systemService ? Array(given.dropFirst()) : given
        guard arguments.first == DaemonCommand.command.name else { return nil }
        do {
            let parsed = try parseSubcommand(DaemonCommand.command, Array(arguments.dropFirst()))
            return parsed.has("autostart") && !systemService ? nil : DaemonCommand.becomeTheDaemon(parsed)
        } catch {
            return error.status
        }
    }

    static func run(_ given: [String]) async -> Int32 {
        if let instance, !SystemService.isInstanceName(instance) {
            Output.error(fill(localize("'%s' is not an instance name (a letter or _, then letters, digits, _ or -, at most 32; not ccrelay, the main service's)"), instance))
            return ExitStatus.usage
        }
        let arguments = systemService ? Array(given.dropFirst()) : given
        guard let first = arguments.first else {
            Output.error(localize("no command given") + "\n\n" + overview)
            return ExitStatus.usage
        }
        switch first {
        case "-h", "--help", "help":
            Output.out(overview)
            return ExitStatus.ok
        case "--version", "-V":
            Output.out("ccrelay \(ccrelayVersion)")
            return ExitStatus.ok
        default:
            guard let command = subcommands.first(where: { $0.name == first }) else {
                let message = suggesting(fill(localize("'%s' is not a ccrelay command"), first), for: first, among: subcommands.map(\.name))
                Output.error(message + "\n" + localize("Run 'ccrelay --help' for the list of commands."))
                return ExitStatus.usage
            }
            do {
                return await command.run(try parseSubcommand(command, Array(arguments.dropFirst())))
            } catch {
                return error.status
            }
        }
    }
}
