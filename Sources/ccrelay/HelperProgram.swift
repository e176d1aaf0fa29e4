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
