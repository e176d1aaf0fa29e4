/// `ccrelay demo`: the scripted scenario of `make demo` (docs/testing.md), for an installed copy.
enum DemoCommand {
    static let usage = localize("""
        Usage: ccrelay demo [--srun]

        Plays a one-minute scenario against a private CC server simulator (ccsim)
        with a throwaway certificate: login, keep-alives, a campus notice, the
        server stops answering (keep-alive failing), answers again (back online),
        kicks the session (logged out), the journal, and the badge cleared. With
        --srun, a Srun (深澜) portal's instead: the login (the portal's ac_id found
        in its redirect), the portal ends the session without a word (found at the
        next check, logged in again), then refuses the password (said, no login
        loop). Each step is narrated with `ccrelay status`. In a desktop session
        the bubbles appear on your screen; without one they are printed here.
        Your own configuration, journal and running daemon are not touched.
        Ctrl-C stops everything. Needs openssl (not for --srun), curl, python3,
        python3-dbus and python3-gi.

        Options:
          --srun      play the Srun portal's scene
          -h, --help  show this help

        Exit status: 0 when the scenario ran to the end, 1 otherwise.
        """)

    static let command = Subcommand(
        name: "demo", summary: localize("play the one-minute scenario against a private simulator"), usage: usage, flags: ["srun"], run: run)

    static func run(_ parsed: ParsedArguments) async -> Int32 {
        guard parsed.positionals.isEmpty else { return unexpectedArgument("demo", parsed.positionals[0]) }
        // The simulator and the demo's parts are a package of their own.
        guard helperProgram("ccrelay-demo") != nil else {
            Output.error(localize("demo: the demo and the simulator are in the ccrelay-sim package; install it: sudo apt install ccrelay-sim"))
            return ExitStatus.failure
        }
        return execHelper("ccrelay-demo", parsed.has("srun") ? ["--srun"] : [], for: "demo")
    }
}
