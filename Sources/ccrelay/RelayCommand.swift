import DesktopServices

/// `ccrelay relay test [TARGET]`: a test message through the forwarding path.
enum RelayCommand {
    static let usage = localize("""
        Usage: ccrelay relay test [TARGET] [--config PATH]

        Sends a test message to every target in the configuration's [relay] group
        (ntfy, gotify, webhook, and the forward = push services and mail), or to
        those TARGET names (a service such as ntfy, bark or serverchan, or the
        start of a target's URL), the way the daemon forwards alerts, and prints
        for each what the daemon would make of its answer: delivered; refused
        (the target refuses everything: a wrong key, token or login, in the
        service's own words); refused this message (too long, or a form the
        service cannot take: others would go); unreachable; or not delivered
        (a busy or failing service: the daemon would try again). Nothing is
        added to the journal. The daemon does not need to be running.

        Options:
          --config PATH  use this configuration (default: $XDG_CONFIG_HOME/ccrelay/ccrelay.conf)
          -h, --help     show this help

        Exit status: 0 every target took the message, 1 one did not (or the
        configuration is unusable, or has no [relay] targets), 2 usage error
        (also: TARGET names no configured target).
        """)

    static let command = Subcommand(
        name: "relay", summary: localize("send a test message to the alert forwarding targets"), usage: usage, valued: ["config"],
        words: ["test"], values: ["config": Subcommand.fileValue], run: run)

    static func run(_ parsed: ParsedArguments) async -> Int32 {
        let path = parsed.values["config"] ?? ConfigurationFile.defaultPath()
        guard parsed.positionals.first == "test", parsed.positionals.count <= 2 else {
            return usageError("relay", suggesting(localize("expected 'test [TARGET]'"), for: parsed.positionals.first, among: ["test"]))
        }
        // Sent by the daemon's executable: libcurl loads there, not in the CLI.
        return execHelper("ccrelay-daemon", ["--relay-test", "--config", path] + parsed.positionals.dropFirst(), for: "relay")
    }
}
