import DesktopServices
#if canImport(Glibc)
import Glibc
#endif

/// The tray's "Set up…": `ccrelay setup` in the desktop's terminal
/// (`x-terminal-emulator`, Debian's alternative for whichever is installed).
enum SetupLauncher {
    /// Starts it detached (its own session; this process does not wait for
    /// it). False when there is no terminal or it could not start.
    static func openTerminal(log: (String) -> Void) -> Bool {
        guard let folder = ExecutableLocation.directory else { return false }
        let candidates: [String] = [folder + "/ccrelay", folder + "/../../bin/ccrelay"]
        let ccrelay = candidates.first { access($0, X_OK) == 0 } ?? "ccrelay"
        guard access("/usr/bin/x-terminal-emulator", X_OK) == 0 else {
            log("no terminal (x-terminal-emulator) to run ccrelay setup in")
            return false
        }
        // sh starts the terminal in the background in its own session and exits
        // at once: the terminal is never this daemon's child to reap.
        let script = "setsid /usr/bin/x-terminal-emulator -e \"$0\" setup </dev/null >/dev/null 2>&1 &"
        var child: pid_t = 0
        let words: [String] = ["/bin/sh", "-c", script, ccrelay]
        let argv = words.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        guard posix_spawn(&child, "/bin/sh", nil, nil, argv, environ) == 0 else { return false }
        var status: Int32 = 0
        _ = waitpid(child, &status, 0)
        return true
    }
}
