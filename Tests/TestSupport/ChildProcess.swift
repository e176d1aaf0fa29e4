import Foundation

/// A helper program started for a test with `posix_spawn`, stopped (and
/// reaped) when the value goes away.
public final class ChildProcess: @unchecked Sendable {
    // Guard: `exitStatus` is only touched while holding `lock`.
    public let pid: pid_t
    /// Read ends of the child's stdout and stderr (nil when not captured).
    public let standardOutput: FileHandle?
    public let standardError: FileHandle?
    private let lock = NSLock()
    private var exitStatus: Int32?

    /// Starts `executable` with `arguments`; `environment` is added to this process's.
    /// With `outputFiles`, stdout and stderr are written to those paths instead.
    /// With `ownProcessGroup`, the child leads a process group of its own, as a
    /// shell's foreground job does (`kill(-pid, SIGINT)` is then a terminal's Ctrl-C).
    public init(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                captureOutput: Bool = true, outputFiles: (String, String)? = nil, inputFile: String = "/dev/null",
                ownProcessGroup: Bool = false) throws {
        let captureOutput = captureOutput && outputFiles == nil
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, inputFile, O_RDONLY, 0)
        var outPipe: [Int32] = [-1, -1]
        var errPipe: [Int32] = [-1, -1]
        if captureOutput {
            // Close-on-exec, so that children started at the same time by other
            // tests do not inherit these pipes and hold them open.
            guard pipe(&outPipe) == 0, pipe(&errPipe) == 0 else { throw TestSetupError("pipe failed") }
            for fd in outPipe + errPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
            posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        } else if let (out, err) = outputFiles {
            posix_spawn_file_actions_addopen(&actions, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            posix_spawn_file_actions_addopen(&actions, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        let merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        // The test runner's threads block signals; the child must start with
        // none blocked and default handlers, or SIGTERM would not stop it.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        var allSignals = sigset_t()
        sigemptyset(&noSignals)
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | (ownProcessGroup ? POSIX_SPAWN_SETPGROUP : 0)))
        var child: pid_t = 0
        let status = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        if captureOutput {
            close(outPipe[1])
            close(errPipe[1])
        }
        guard status == 0 else {
            if captureOutput { close(outPipe[0]); close(errPipe[0]) }
            throw TestSetupError("cannot start \(executable): \(String(cString: strerror(status)))")
        }
        pid = child
        standardOutput = captureOutput ? FileHandle(fileDescriptor: outPipe[0], closeOnDealloc: true) : nil
        standardError = captureOutput ? FileHandle(fileDescriptor: errPipe[0], closeOnDealloc: true) : nil
    }

    /// Reads one line of standard output (blocking).
    public func readLine() -> String? {
        guard let handle = standardOutput else { return nil }
        var bytes: [UInt8] = []
        while true {
            guard let byte = handle.readData(ofLength: 1).first else {
                return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
    }

    /// Waits for the process to end and returns its exit status (128+signal when killed).
    @discardableResult
    public func wait() -> Int32 {
        lock.withLock {
            if let exitStatus { return exitStatus }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
            exitStatus = code
            return code
        }
    }

    /// True while the process has not ended.
    public var isRunning: Bool {
        lock.withLock {
            guard exitStatus == nil else { return false }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                exitStatus = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
                return false
            }
            return true
        }
    }

    /// Sends `signal` and waits for the process to end.
    public func stop(signal: Int32 = SIGTERM) {
        if isRunning { kill(pid, signal) }
        wait()
    }

    deinit { stop() }
}

/// The result of running a command to its end.
public struct CommandResult: Sendable {
    public var status: Int32
    public var standardOutput: String
    public var standardError: String
}

/// Runs a command to its end, with `environment` added to this process's.
///
/// Output goes to temporary files, not pipes: reading pipes would need a
/// second thread, and the test runner's threads are few and shared.
public func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:], input: String = "")
    throws -> CommandResult
{
    let base = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-run-\(UUID().uuidString)").path
    defer {
        unlink(base + ".out")
        unlink(base + ".err")
        unlink(base + ".in")
    }
    try input.write(toFile: base + ".in", atomically: false, encoding: .utf8)
    let child = try ChildProcess(
        executable, arguments, environment: environment, outputFiles: (base + ".out", base + ".err"),
        inputFile: base + ".in")
    let status = child.wait()
    func text(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }
    return CommandResult(status: status, standardOutput: text(base + ".out"), standardError: text(base + ".err"))
}

/// A value shared between threads behind a lock.
public final class LockedBox<T: Sendable>: @unchecked Sendable {
    // Guard: `value` is only touched while holding `lock`.
    private let lock = NSLock()
    private var value: T
    public init(_ value: T) { self.value = value }
    public func get() -> T { lock.withLock { value } }
    public func set(_ newValue: T) { lock.withLock { value = newValue } }
    public func update(_ change: (inout T) -> Void) { lock.withLock { change(&value) } }
}

/// Polls `condition` until it holds or `timeout` passes; true when it held.
public func eventually(timeout: Duration = .seconds(15), interval: Duration = .milliseconds(50),
                       _ condition: () async throws -> Bool) async rethrows -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return try await condition()
}

/// `eventually` without leaving the thread: for a test that must see a moment
/// while it lasts. Tests that block in `run` can hold every thread of the
/// cooperative pool (two on a 2-core machine) for as long as their child runs,
/// and an `await` would then resume only after the moment had passed.
public func eventuallyBlocking(timeout: Duration = .seconds(15), interval: Duration = .milliseconds(50),
                               _ condition: () -> Bool) -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if condition() { return true }
        usleep(UInt32(interval.components.attoseconds / 1_000_000_000_000) + UInt32(interval.components.seconds) * 1_000_000)
    }
    return condition()
}

/// The folder the test binaries were built into (holds `ccrelay`).
public var buildProductsDirectory: URL {
    URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
}

/// Writes a script a test runs (mode 0755). The file is made by cp in a process
/// of its own: a file this process opened for writing could be inherited by a
/// child another test spawns meanwhile, and running it would then fail with
/// ETXTBSY (exit 126) until that child exits.
public func writeExecutable(_ text: String, to path: String) throws {
    try text.write(toFile: path + ".text", atomically: true, encoding: .utf8)
    defer { unlink(path + ".text") }
    let copied = try run("/bin/cp", [path + ".text", path])
    guard copied.status == 0 else { throw TestSetupError("cp: \(copied.standardError)") }
    chmod(path, 0o755)
}
