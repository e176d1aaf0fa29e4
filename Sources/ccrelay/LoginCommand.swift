import DBus
import Dispatch
import Relay
#if canImport(Glibc)
import Glibc
#endif

/// `ccrelay login --save-password`: stores the campus password in the
/// desktop keyring (Secret Service), asking for it on the terminal.
enum LoginCommand {
    static let usage = """
        Usage: ccrelay login --save-password --user ID [--password-stdin]

        Saves the password of campus account ID in your desktop keyring (the
        Secret Service: GNOME Keyring, KWallet, KeePassXC), where the daemon reads
        it for a password login ([auth] user in ccrelay.conf). The password is
        asked for on the terminal without echo; it is never taken from the command
        line or a file.

        Options:
          --save-password   store the password (what this command does now; asking a
                            running daemon to log in arrives with the daemon)
          --user ID         the campus account (student number)
          --password-stdin  read the password from standard input instead of the
                            terminal (for scripts: printf %s "$PW" | ccrelay login ...)
          -h, --help        show this help

        Exit status: 0 saved, 1 the keyring refused or is unavailable, 2 usage error.
        """

    static func run(_ arguments: [String]) async -> Int32 {
        let parsed: ParsedArguments
        do {
            parsed = try parseSubcommand("login", arguments, usage: usage, flags: ["save-password", "password-stdin"], valued: ["user"])
        } catch {
            return error.status
        }
        guard parsed.has("save-password"), parsed.positionals.isEmpty else {
            Output.error("login: this version only saves the password: ccrelay login --save-password --user ID")
            return ExitStatus.usage
        }
        guard let user = parsed.values["user"], !user.isEmpty else {
            Output.error("login: --user ID is required (your campus account)")
            return ExitStatus.usage
        }
        let password = parsed.has("password-stdin") ? readLine(strippingNewline: true) : askWithoutEcho("Campus password for \(user): ")
        guard let password, !password.isEmpty else {
            Output.error("login: no password given; nothing was saved")
            return ExitStatus.failure
        }
        let connection: Connection
        do {
            connection = try Connection(bus: .session, queue: DispatchQueue(label: "ccrelay.login"))
        } catch {
            Output.error("cannot connect to the session bus: \(error.message)")
            return ExitStatus.failure
        }
        defer { connection.queue.sync { connection.close() } }
        do {
            try await SecretService(connection: connection).storePassword(password, user: user)
        } catch {
            let hint = error.name == .serviceUnknown
                ? "no keyring (Secret Service) is running in this session; start gnome-keyring or KWallet" : error.message
            Output.error("login: the keyring did not save the password: \(hint)")
            return ExitStatus.failure
        }
        Output.out("Saved the campus password of \(user) in your keyring.")
        return ExitStatus.ok
    }

    /// Reads a line from the terminal with echo off; nil without a terminal.
    private static func askWithoutEcho(_ prompt: String) -> String? {
        let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard tty >= 0 else {
            Output.error("login: no terminal to ask for the password; use --password-stdin")
            return nil
        }
        defer { close(tty) }
        _ = prompt.withCString { write(tty, $0, strlen($0)) }
        var saved = termios()
        tcgetattr(tty, &saved)
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(tty, TCSAFLUSH, &quiet)
        defer {
            tcsetattr(tty, TCSAFLUSH, &saved)
            _ = write(tty, "\n", 1)
        }
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while read(tty, &byte, 1) == 1, byte != UInt8(ascii: "\n") { bytes.append(byte) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
