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

/// Where a program run to its end writes.
enum ChildOutput {
    /// To this process's standard output and error.
    case inherit
    /// To /dev/null.
    case discard
    /// Into the result (both streams, at most 64 KiB).
    case capture
}

/// Runs `program` with `arguments` to its end; `input` (when given) is
/// written to its standard input. Its exit status (nil when it could not be
/// started, or did not exit) and, with `.capture`, what it wrote.
func runChild(_ program: String, _ arguments: [String], input: String? = nil, output: ChildOutput = .inherit)
    -> (status: Int32?, output: String)
{
    var inputEnds: [Int32] = [-1, -1]
    var outputEnds: [Int32] = [-1, -1]
    if input != nil { guard pipe(&inputEnds) == 0 else { return (nil, "") } }
    if output == .capture {
        guard pipe(&outputEnds) == 0 else {
            if input != nil { inputEnds.forEach { close($0) } }
            return (nil, "")
        }
    }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    if input != nil {
        posix_spawn_file_actions_adddup2(&actions, inputEnds[0], 0)
        posix_spawn_file_actions_addclose(&actions, inputEnds[1])
    }
    switch output {
    case .inherit: break
    case .discard:
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    case .capture:
        posix_spawn_file_actions_adddup2(&actions, outputEnds[1], 1)
        posix_spawn_file_actions_adddup2(&actions, outputEnds[1], 2)
        posix_spawn_file_actions_addclose(&actions, outputEnds[0])
        if input == nil { posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0) }
    }
    let words: [String] = [program] + arguments
    var argv = words.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, program, &actions, nil, &argv, environ)
    if let input {
        close(inputEnds[0])
        if spawned == 0 {
            let bytes = Array(input.utf8)
            _ = bytes.withUnsafeBytes { write(inputEnds[1], $0.baseAddress, $0.count) }
        }
        close(inputEnds[1])
    }
    var captured: [UInt8] = []
    if output == .capture {
        close(outputEnds[1])
        var buffer = [UInt8](repeating: 0, count: 4096)
        while spawned == 0 {
            let count = read(outputEnds[0], &buffer, buffer.count)
            if count > 0 {
                if captured.count < 65_536 { captured += buffer.prefix(count) }
            } else if count == 0 || errno != EINTR {
                break
            }
        }
        close(outputEnds[0])
    }
    guard spawned == 0 else { return (nil, "") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    // WIFEXITED, then WEXITSTATUS.
    let exited = status & 0x7f == 0
    return (exited ? (status >> 8) & 0xff : nil, String(decoding: captured, as: UTF8.self))
}

/// Runs `program` to its end (see `runChild`); with `quiet` its output goes to /dev/null. True when it exited 0.
func runToEnd(_ program: String, _ arguments: [String], input: String? = nil, quiet: Bool = false) -> Bool {
    runChild(program, arguments, input: input, output: quiet ? .discard : .inherit).status == 0
}

/// `systemctl --user --quiet ARGUMENTS`, its output hidden; true when it worked.
func systemctlUser(_ arguments: [String]) -> Bool {
    access("/usr/bin/systemctl", X_OK) == 0 && runToEnd("/usr/bin/systemctl", ["--user", "--quiet"] + arguments, quiet: true)
}
