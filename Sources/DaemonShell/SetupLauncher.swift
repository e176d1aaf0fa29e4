import DesktopServices
#if canImport(Glibc)
import Glibc
#endif

/// The tray's "Set up…": `ccrelay setup --edit` in the desktop's terminal
/// (`x-terminal-emulator`, Debian's alternative for whichever is installed),
/// which asks with the current answers as defaults (once set up, a plain
/// `setup` would refuse to replace the file and the window would close at
/// once); the window stays open until Enter, so its last words can be read.
enum SetupLauncher {
    /// Starts it detached (its own session; this process does not wait for
    /// it). False when there is no terminal or it could not start.
    static func openTerminal(configurationPath: String, log: (String) -> Void) -> Bool {
        guard let folder = ExecutableLocation.directory else { return false }
        let candidates: [String] = [folder + "/ccrelay", folder + "/../../bin/ccrelay"]
        let ccrelay = candidates.first { access($0, X_OK) == 0 } ?? "ccrelay"
        guard let terminal = findInPath("x-terminal-emulator") else {
            log("no terminal (x-terminal-emulator) to run ccrelay setup in")
            return false
        }
        // sh starts the terminal in the background in its own session and exits
        // at once: the terminal is never this daemon's child to reap.
        let inTerminal = #""$0" setup --edit --config "$1"; printf '\n%s' "$2"; read -r _"#
        let script = #"setsid "$3" -e /bin/sh -c "$4" "$0" "$1" "$2" </dev/null >/dev/null 2>&1 &"#
        var child: pid_t = 0
        let words: [String] = ["/bin/sh", "-c", script, ccrelay, configurationPath,
                               Localization.localize("Press Enter to close this window."), terminal, inTerminal]
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
