import DesktopServices

/// `ccrelay config check|path`.
enum ConfigCommand {
    static let usage = localize("""
        Usage: ccrelay config check [--config PATH]
               ccrelay config path

        check  checks the configuration (default: $XDG_CONFIG_HOME/ccrelay/ccrelay.conf)
               exactly as the daemon does when it starts — the file, the URL, the
               certificate and key (readable, chmod 600, unencrypted, a matching pair,
               not expired), the CA file, the interface — and reports every problem as
               FILE:LINE: message; warnings for unknown keys, errors for bad values.
               Exit status 0 when the daemon would start with it, 1 when not.
        path   prints the path of the configuration file ccrelay reads.

        With ccrelay --system, the system service's file (/etc/ccrelay/ccrelay.conf),
        and check also warns when no [relay] target would hear about a logout.

        Options:
          --config PATH  check this file instead
          -h, --help     show this help
        """)

    static let command = Subcommand(
        name: "config", summary: localize("check the configuration file, or print its path"), usage: usage, valued: ["config"],
        words: ["check", "path"], values: ["config": Subcommand.fileValue], run: run)

    static func run(_ parsed: ParsedArguments) async -> Int32 {
        let path = parsed.values["config"] ?? (CLI.systemService ? SystemService.configurationPath(instance: CLI.instance) : ConfigurationFile.defaultPath())
        switch parsed.positionals {
        case ["path"]:
            Output.out(path)
            return ExitStatus.ok
        case ["check"]:
            // The daemon's own checks, through its own code (the files, the
            // certificate and key, the URL rules, the interface).
            return execHelper("ccrelay-daemon", (CLI.systemService ? ["--system"] + (CLI.instance.map { ["--instance", $0] } ?? []) : []) + ["--check", "--config", path], for: "config")
        default:
            return usageError("config", suggesting(localize("expected 'check' or 'path'"), for: parsed.positionals.first, among: ["check", "path"]))
        }
    }
}
