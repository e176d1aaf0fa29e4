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
        Output.error("\(command): " + fill(localize("%s is missing; it belongs next to ccrelay or in ../libexec/ccrelay/ (reinstall ccrelay)"), name))
        return ExitStatus.failure
    }
    var argv = ([name] + arguments).map { strdup($0) } + [nil]
    execv(program, &argv)
    Output.error("\(command): " + fill(localize("cannot run %s: %s"), program, SystemError.reason(errno)))
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
    guard let child = Child(program, arguments, input: input, output: output) else { return (nil, "") }
    var captured: [UInt8] = []
    if let descriptor = child.output {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            if count > 0 {
                if captured.count < 65_536 { captured += buffer.prefix(count) }
            } else if count == 0 || errno != EINTR {
                break
            }
        }
    }
    return (child.wait(), String(decoding: captured, as: UTF8.self))
}

/// Runs `program` with `arguments`, giving `line` each line it writes (both
/// streams, at most 64 KiB in all) as it comes, for at most `deadline`;
/// a program still running then is killed. Its exit status (nil when it could
/// not be started or did not exit), and whether it finished in time.
func runChildLines(_ program: String, _ arguments: [String], deadline: Duration, line: (String) -> Void)
    -> (status: Int32?, finished: Bool)
{
    guard let child = Child(program, arguments, input: nil, output: .capture), let descriptor = child.output else { return (nil, true) }
    let end = BootClock.now() + deadline
    var pending: [UInt8] = []
    var total = 0
    var buffer = [UInt8](repeating: 0, count: 4096)
    var finished = true
    while true {
        let left = end - BootClock.now()
        guard left > .zero else {
            finished = false
            kill(child.pid, SIGKILL)
            break
        }
        var poll = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
        let ready = Glibc.poll(&poll, 1, milliseconds)
        if ready < 0 && errno == EINTR { continue }
        guard ready > 0 else { continue }
        let count = read(descriptor, &buffer, buffer.count)
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { break }
        guard total < 65_536 else { continue }
        total += count
        pending += buffer.prefix(count)
        while let newline = pending.firstIndex(of: 0x0A) {
            line(String(decoding: pending[..<newline], as: UTF8.self))
            pending.removeSubrange(...newline)
        }
    }
    if finished && !pending.isEmpty { line(String(decoding: pending, as: UTF8.self)) }
    return (child.wait(), finished)
}

/// A program started with posix_spawn: its standard input written and
/// closed, its output where `ChildOutput` says (with `.capture`, the read
/// end of a pipe that both streams go to, closed by `wait`).
private struct Child {
    let pid: pid_t
    let output: Int32?

    init?(_ program: String, _ arguments: [String], input: String?, output: ChildOutput) {
        var inputEnds: [Int32] = [-1, -1]
        var outputEnds: [Int32] = [-1, -1]
        if input != nil { guard Self.pipe(&inputEnds) else { return nil } }
        if output == .capture {
            guard Self.pipe(&outputEnds) else {
                if input != nil { inputEnds.forEach { close($0) } }
                return nil
            }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if input != nil { posix_spawn_file_actions_adddup2(&actions, inputEnds[0], 0) }
        switch output {
        case .inherit: break
        case .discard:
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        case .capture:
            posix_spawn_file_actions_adddup2(&actions, outputEnds[1], 1)
            posix_spawn_file_actions_adddup2(&actions, outputEnds[1], 2)
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
        if output == .capture { close(outputEnds[1]) }
        guard spawned == 0 else {
            if output == .capture { close(outputEnds[0]) }
            return nil
        }
        self.pid = pid
        self.output = output == .capture ? outputEnds[0] : nil
    }

    /// A pipe whose ends the program does not inherit (those it needs are dup'ed to 0, 1 and 2).
    private static func pipe(_ ends: inout [Int32]) -> Bool {
        guard Glibc.pipe(&ends) == 0 else { return false }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return true
    }

    /// Waits for the program to end; its exit status, nil when it did not exit (a signal).
    func wait() -> Int32? {
        if let output { close(output) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        // WIFEXITED, then WEXITSTATUS.
        return status & 0x7f == 0 ? (status >> 8) & 0xff : nil
    }
}

/// Runs `program` to its end (see `runChild`); with `quiet` its output goes to /dev/null. True when it exited 0.
func runToEnd(_ program: String, _ arguments: [String], input: String? = nil, quiet: Bool = false) -> Bool {
    runChild(program, arguments, input: input, output: quiet ? .discard : .inherit).status == 0
}

/// `systemctl --user --quiet ARGUMENTS`, its output hidden; true when it worked.
func systemctlUser(_ arguments: [String]) -> Bool {
    access("/usr/bin/systemctl", X_OK) == 0 && runToEnd("/usr/bin/systemctl", ["--user", "--quiet"] + arguments, quiet: true)
}
