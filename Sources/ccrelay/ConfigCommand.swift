import Relay

/// `ccrelay config check|path`.
enum ConfigCommand {
    static let usage = """
        Usage: ccrelay config check [--config PATH]
               ccrelay config path

        check  reads the configuration (default: $XDG_CONFIG_HOME/ccrelay/ccrelay.conf)
               and reports every problem as FILE:LINE: message; warnings for unknown
               keys, errors for bad values. Exit status 0 when it is usable, 1 when not.
        path   prints the path of the configuration file ccrelay reads.

        Options:
          --config PATH  check this file instead
          -h, --help     show this help
        """

    static func run(_ arguments: [String]) async -> Int32 {
        let parsed: ParsedArguments
        do {
            parsed = try parseSubcommand("config", arguments, usage: usage, flags: [], valued: ["config"])
        } catch {
            return error.status
        }
        let path = parsed.values["config"] ?? ConfigurationFile.defaultPath()
        switch parsed.positionals {
        case ["path"]:
            Output.out(path)
            return ExitStatus.ok
        case ["check"]:
            let result = ConfigurationFile.load(path)
            for warning in result.warnings { Output.error("warning: \(warning)") }
            for error in result.errors { Output.error("error: \(error)") }
            guard result.configuration != nil else { return ExitStatus.failure }
            Output.out("\(path): ok")
            return ExitStatus.ok
        default:
            var message = "config: expected 'check' or 'path'"
            if let word = parsed.positionals.first, let near = nearestMatch(to: word, among: ["check", "path"]) {
                message += "; did you mean '\(near)'?"
            }
            Output.error(message + "\nTry 'ccrelay config --help'.")
            return ExitStatus.usage
        }
    }
}
