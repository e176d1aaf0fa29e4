import DBus
import DBusAsync
import DispatchLoop
import Dispatch
import CCRelayCore
import CoreVocabulary
import DesktopServices
#if canImport(Glibc)
import Glibc
#endif

/// `ccrelay login`: asks the daemon to log in now and waits for the answer;
/// with `--save-password`, stores the campus password in the desktop keyring
/// (Secret Service), asking for it on the terminal.
enum LoginCommand {
    static let usage = localize("""
        Usage: ccrelay login [--wait SECONDS]
               ccrelay login --save-password --user ID [--password-stdin]

        Without options: asks the running daemon to log in to the campus CC server
        now (after a logout, a refused certificate you have since replaced, or a
        kick) and waits until it is online or the server refused.

        With --save-password: saves the password of campus account ID in your
        desktop keyring (the Secret Service: GNOME Keyring, KWallet, KeePassXC),
        where the daemon reads it for a password login ([auth] user in
        ccrelay.conf). The password is asked for on the terminal without echo; it
        is never taken from the command line or a file.

        Options:
          --wait SECONDS    how long to wait for the login (default 30)
          --save-password   store the password instead of logging in
          --user ID         the campus account (student number)
          --password-stdin  read the password from standard input instead of the
                            terminal (for scripts: printf %s "$PW" | ccrelay login ...)
          -h, --help        show this help

        Exit status: 0 logged in (or saved), 1 the server refused, the wait ran out,
        or the keyring failed, 2 usage error, 3 the daemon is not running.
        """)

    static let command = Subcommand(
        name: "login", summary: localize("log in now, or save your campus password in the keyring"), usage: usage,
        flags: ["save-password", "password-stdin"], valued: ["user", "wait"], run: run)

    static func run(_ parsed: ParsedArguments) async -> Int32 {
        guard parsed.positionals.isEmpty else { return unexpectedArgument("login", parsed.positionals[0]) }
        guard parsed.has("save-password") else {
            guard parsed.values["user"] == nil, !parsed.has("password-stdin") else {
                return usageError("login", localize("--user and --password-stdin go with --save-password"))
            }
            let waitText = parsed.values["wait"] ?? "30"
            guard let wait = Double(waitText), wait > 0, wait <= 3600 else {
                return usageError("login", fill(localize("--wait needs a number of seconds between 0 and 3600, not '%s'"), waitText))
            }
            return await loginNow(waitingUpTo: wait)
        }
        guard let user = parsed.values["user"], !user.isEmpty else {
            return usageError("login", localize("--user ID is required (your campus account)"))
        }
        var password: String?
        if parsed.has("password-stdin") {
            switch SecretInput.readLine() {
            case .text(let text): password = text
            case .none: password = nil
            case .tooLong:
                Output.error("login: " + fill(localize("the password is longer than %s bytes; is standard input the right file? Nothing was saved"), "\(SecretInput.limit)"))
                return ExitStatus.failure
            }
        } else {
            password = askWithoutEcho(fill(localize("Campus password for %s: "), user))
        }
        guard let password, !password.isEmpty else {
            Output.error("login: " + localize("no password given; nothing was saved"))
            return ExitStatus.failure
        }
        let connection: Connection
        do {
            connection = try Connection(bus: .session, loop: DispatchScheduler(label: "ccrelay.login"))
        } catch {
            Output.error(fill(localize("cannot connect to the session bus (%s); run this inside your desktop session"), error.message))
            return ExitStatus.failure
        }
        defer { connection.loop.sync { connection.close() } }
        let failure: DBusError? = await withCheckedContinuation { continuation in
            connection.loop.execute {
                SecretService(connection: connection).storePassword(password, user: user) { continuation.resume(returning: $0) }
            }
        }
        if let error = failure {
            let hint = error.name == .serviceUnknown
                ? localize("no keyring (Secret Service) is running in this session; start gnome-keyring or KWallet") : error.message
            Output.error("login: " + fill(localize("the keyring did not save the password: %s"), hint))
            return ExitStatus.failure
        }
        Output.out(fill(localize("Saved the campus password of %s in your keyring."), user))
        return ExitStatus.ok
    }

    /// Asks the daemon to log in, then follows its State until it settles.
    private static func loginNow(waitingUpTo seconds: Double) async -> Int32 {
        let client: ControlClient
        do { client = try await ControlClient.connect() } catch { return error.report("login") }
        defer { client.close() }
        let (changes, continuation) = AsyncStream<Bool>.makeStream()
        // Subscribed before the call, so that no change is missed.
        client.onPropertiesChanged { continuation.yield(true) }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { continuation.yield(false) }
        do {
            _ = try await client.call("Login")
            var status = try await client.status()
            var iterator = changes.makeAsyncIterator()
            while true {
                switch DaemonState(rawValue: status.state) {
                case .online?:
                    Output.out(status.ip.isEmpty ? localize("Logged in.") : fill(localize("Logged in (outside access for %s)."), status.ip))
                    return ExitStatus.ok
                case .loggedOut?:
                    Output.error("login: " + fill(localize("the server refused: %s"), status.lastError.isEmpty ? "ccrelay history" : StatusCommand.lastError(status)))
                    return ExitStatus.failure
                case .unconfigured?:
                    Output.error("login: " + fill(localize("ccrelay is not set up: %s"), StatusCommand.lastError(status)))
                    return ExitStatus.failure
                default:
                    guard await iterator.next() == true else {
                        let state = TimelineText.state(status.state, localize: Localization.localizer)
                        let why = status.lastError.isEmpty ? "" : " (\(StatusCommand.lastError(status)))"
                        Output.error("login: " + fill(localize("still %s after %s s%s; the daemon keeps trying"), state, "\(Int(seconds))", why))
                        return ExitStatus.failure
                    }
                    status = try await client.status()
                }
            }
        } catch {
            return error.report("login")
        }
    }

    /// Reads a line from the terminal with echo off; nil without a terminal.
    static func askWithoutEcho(_ prompt: String) -> String? {
        let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard tty >= 0 else {
            Output.error("login: " + localize("no terminal to ask for the password; use --password-stdin"))
            return nil
        }
        defer { close(tty) }
        var saved = termios()
        tcgetattr(tty, &saved)
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(tty, TCSAFLUSH, &quiet)
        // The prompt only once echo is off: TCSAFLUSH drops what was typed before it.
        _ = prompt.withCString { write(tty, $0, strlen($0)) }
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
