import CLinux
import EventLoop
#if canImport(Glibc)
import Glibc
#endif

/// SIGTERM and SIGINT, read from a signalfd on the daemon's loop.
///
/// The signals are blocked before any thread exists (so every thread a
/// library might start inherits the mask): none is then delivered the
/// ordinary way and lost; each waits in the signalfd until `handler` has run.
public final class StopSignals {
    private let descriptor: Int32
    private var watch: (any IOWatch)?

    /// Blocks SIGTERM and SIGINT for this thread and every thread it starts.
    public static func block() {
        var set = stopSet
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Lets SIGTERM and SIGINT through again (a re-exec'd daemon inherits the blocked mask).
    public static func unblock() {
        var set = stopSet
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    private static var stopSet: sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGINT)
        return set
    }

    /// Calls `handler` on `loop` for each SIGTERM or SIGINT.
    public init(loop: any EventScheduler, handler: @escaping () -> Void) throws(SystemError) {
        var set = Self.stopSet
        descriptor = try systemCall("signalfd") { signalfd(-1, &set, Int32(SFD_CLOEXEC | SFD_NONBLOCK)) }
        let descriptor = descriptor
        watch = loop.watch(descriptor, for: .readable) { _ in
            var info = signalfd_siginfo()
            while read(descriptor, &info, MemoryLayout<signalfd_siginfo>.size) == MemoryLayout<signalfd_siginfo>.size {
                handler()
            }
        }
    }

    deinit {
        watch?.cancel()
        close(descriptor)
    }
}
