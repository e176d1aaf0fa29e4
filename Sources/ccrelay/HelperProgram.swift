import EventLoop
import DesktopServices
#if canImport(Glibc)
import Glibc
#endif

/// A program of ccrelay's own that a subcommand becomes: next to this
/// executable (the build tree), or in `../libexec/ccrelay/` (an installed copy).
func helperProgram(_ name: String) -> String? {
    guard let directory = ExecutableLocation.directory else { return nil }
    return [directory + "/" + name, directory + "/../libexec/ccrelay/" + name].first { access($0, X_OK) == 0 }
}

/// Replaces this process with helper `name` (same PID, environment and
/// descriptors); returns only when that fails, with status 1.
func execHelper(_ name: String, _ arguments: [String], for command: String) -> Int32 {
    guard let program = helperProgram(name) else {
        Output.error("\(command): \(name) is missing; it belongs next to ccrelay or in ../libexec/ccrelay/ (reinstall ccrelay)")
        return ExitStatus.failure
    }
    var argv = ([name] + arguments).map { strdup($0) } + [nil]
    execv(program, &argv)
    Output.error("\(command): cannot run \(program): \(SystemError.reason(errno))")
    return ExitStatus.failure
}

/// Runs `program` with `arguments` to its end; `input` (when given) is
/// written to its standard input, and with `quiet` its output goes to
/// /dev/null. True when it exited 0.
func runToEnd(_ program: String, _ arguments: [String], input: String? = nil, quiet: Bool = false) -> Bool {
    var ends: [Int32] = [-1, -1]
    if input != nil { guard pipe(&ends) == 0 else { return false } }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    if input != nil {
        posix_spawn_file_actions_adddup2(&actions, ends[0], 0)
        posix_spawn_file_actions_addclose(&actions, ends[1])
    }
    if quiet {
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    }
    let words: [String] = [program] + arguments
    var argv = words.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, program, &actions, nil, &argv, environ)
    if let input {
        close(ends[0])
        if spawned == 0 {
            let bytes = Array(input.utf8)
            _ = bytes.withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) }
        }
        close(ends[1])
    }
    guard spawned == 0 else { return false }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    return status == 0
}

/// `systemctl --user --quiet ARGUMENTS`, its output hidden; true when it worked.
func systemctlUser(_ arguments: [String]) -> Bool {
    access("/usr/bin/systemctl", X_OK) == 0 && runToEnd("/usr/bin/systemctl", ["--user", "--quiet"] + arguments, quiet: true)
}
