import DesktopServices

#if canImport(Glibc)
import Glibc
#endif

Localization.setUp()
exit(await CLI.run(Array(CommandLine.arguments.dropFirst())))
