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

    static let command = Subcommand(
        name: "config", summary: "check the configuration file, or print its path", usage: usage, valued: ["config"],
        words: ["check", "path"], values: ["config": Subcommand.fileValue], run: run)

    static func run(_ parsed: ParsedArguments) async -> Int32 {
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
            return usageError("config", suggesting("expected 'check' or 'path'", for: parsed.positionals.first, among: ["check", "path"]))
        }
    }
}
