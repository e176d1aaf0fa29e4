/// `ccrelay logout`: ends the campus session; the daemon stays, idle.
enum LogoutCommand {
    static let usage = localize("""
        Usage: ccrelay logout

        Asks the running daemon to log out of the campus CC server (outside network
        access ends) and to stay idle until 'ccrelay login', a restart of the
        daemon, or the "Log in again" button of an alert.

        Options:
          -h, --help  show this help

        Exit status: 0 logged out, 1 no answer, 2 usage error, 3 the daemon is not
        running.
        """)

    static let command = Subcommand(name: "logout", summary: localize("log out of the campus network now"), usage: usage, run: run)

    static func run(_ parsed: ParsedArguments) async -> Int32 {
        guard parsed.positionals.isEmpty else { return unexpectedArgument("logout", parsed.positionals[0]) }
        let client: ControlClient
        do { client = try await ControlClient.connect() } catch { return error.report("logout") }
        defer { client.close() }
        do {
            _ = try await client.call("Logout")
        } catch {
            return error.report("logout")
        }
        Output.out(localize("Logged out. The daemon stays idle; ccrelay login logs in again."))
        return ExitStatus.ok
    }
}
