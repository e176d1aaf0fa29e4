import CFuzzerDriver
#if canImport(Glibc)
import Glibc
#endif

// The fuzzing loop (libFuzzer's flags: -max_total_time=S, -runs=N, corpus folders).
var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzRelay(data!, size) })
