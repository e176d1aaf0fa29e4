import DesktopServices

#if canImport(Glibc)
import Glibc
#endif

// A closed pipe (`ccrelay history | head`, a helper that exited before
// reading its input) is an EPIPE error to handle, never a silent death.
signal(SIGPIPE, SIG_IGN)
Localization.setUp()
let arguments = Array(CommandLine.arguments.dropFirst())
if let status = CLI.runBeforeTasks(arguments) { exit(status) }
exit(await CLI.run(arguments))
