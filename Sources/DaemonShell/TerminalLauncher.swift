import DesktopServices
#if canImport(Glibc)
import Glibc
#endif

/// The tray's entries that run `ccrelay` in the desktop's terminal
/// (`x-terminal-emulator`, Debian's alternative for whichever is installed):
/// "Set up…" runs `ccrelay setup --edit` (with the current answers as
/// defaults: once set up, a plain `setup` would refuse to replace the file
/// and the window would close at once), "Timeline…" runs `ccrelay timeline`.
/// The window stays open until Enter, so its last words can be read.
enum TerminalLauncher {
    /// `ccrelay setup --edit --config PATH`.
    static func setup(configurationPath: String, log: (String) -> Void) -> Bool {
        open(["setup", "--edit", "--config", configurationPath], log: log)
    }

    /// `ccrelay timeline --since 7d`: why the session changed over the last week.
    static func timeline(log: (String) -> Void) -> Bool {
        open(["timeline", "--since", "7d"], log: log)
    }

    /// Starts `ccrelay ARGUMENTS` in a terminal, detached (its own session;
    /// this process does not wait for it). False when there is no terminal
    /// or it could not start.
    private static func open(_ arguments: [String], log: (String) -> Void) -> Bool {
        guard let folder = ExecutableLocation.directory else { return false }
        let candidates: [String] = [folder + "/ccrelay", folder + "/../../bin/ccrelay"]
        let ccrelay = candidates.first { access($0, X_OK) == 0 } ?? "ccrelay"
        guard let terminal = findInPath("x-terminal-emulator") else {
            log("no terminal (x-terminal-emulator) to run ccrelay \(arguments.first ?? "") in")
            return false
        }
        // In the terminal: the command, then the last words and a wait for Enter.
        let inTerminal = #"message=$1; shift; "$@"; printf '\n%s' "$message"; read -r _"#
        // sh starts the terminal in the background in its own session and exits
        // at once: the terminal is never this daemon's child to reap.
        let script = #"terminal=$1; inner=$2; shift 2; setsid "$terminal" -e /bin/sh -c "$inner" sh "$@" </dev/null >/dev/null 2>&1 &"#
        var child: pid_t = 0
        let words: [String] = ["/bin/sh", "-c", script, "sh", terminal, inTerminal,
                               Localization.localize("Press Enter to close this window."), ccrelay] + arguments
        let argv = words.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        guard posix_spawn(&child, "/bin/sh", nil, nil, argv, environ) == 0 else { return false }
        var status: Int32 = 0
        _ = waitpid(child, &status, 0)
        return true
    }

    /// The first executable `name` in `$PATH`.
    private static func findInPath(_ name: String) -> String? {
        let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { access($0, X_OK) == 0 }
    }
}
