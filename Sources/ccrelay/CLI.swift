/// The version printed by `--version`.
let ccrelayVersion = "0.1.0"

/// A subcommand: its name, one line for the overview, and what runs it.
struct Subcommand: Sendable {
    var name: String
    var summary: String
    var run: @Sendable ([String]) async -> Int32
}

/// The command table and the top-level dispatch of `ccrelay`.
enum CLI {
    static let subcommands = [
        Subcommand(name: "daemon", summary: "keep this computer logged in (normally run by systemd)", run: DaemonCommand.run),
        Subcommand(
            name: "notify-test", summary: "show an example of every alert through the desktop's notifications",
            run: NotifyTestCommand.run),
        Subcommand(name: "login", summary: "save your campus password in the desktop keyring", run: LoginCommand.run),
        Subcommand(name: "config", summary: "check the configuration file, or print its path", run: ConfigCommand.run),
    ]

    static var overview: String {
        """
        Usage: ccrelay <command> [options]
               ccrelay --help | --version

        ccrelay keeps this computer logged in to the campus CC server and tells you
        through desktop notifications when it cannot.

        Commands:
        \(subcommands.map { "  " + padded($0.name, 13) + $0.summary }.joined(separator: "\n"))

        Run 'ccrelay <command> --help' for a command's options.
        """
    }

    static func padded(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(1, width - text.count))
    }

    static func run(_ arguments: [String]) async -> Int32 {
        guard let first = arguments.first else {
            Output.error("no command given\n\n" + overview)
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
                var message = "'\(first)' is not a ccrelay command"
                if let nearest = nearestMatch(to: first, among: subcommands.map(\.name)) {
                    message += "; did you mean '\(nearest)'?"
                }
                Output.error(message + "\nRun 'ccrelay --help' for the list of commands.")
                return ExitStatus.usage
            }
            return await command.run(Array(arguments.dropFirst()))
        }
    }
}
