import CLinux
import Dispatch
import Relay
#if canImport(Glibc)
import Glibc
#endif

/// SIGTERM and SIGINT, read from a signalfd on the daemon's queue.
///
/// The signals are blocked in the calling thread before any other thread
/// exists (threads inherit the mask), so none is ever delivered the ordinary
/// way and lost: each waits in the signalfd until `handler` has run. Call
/// `StopSignals.block()` first thing in `main`.
public final class StopSignals: @unchecked Sendable {
    // Guard: immutable after init; the descriptor is read only by `source`'s
    // handler on its queue and closed by its cancel handler there.
    private let descriptor: Int32
    private let source: DispatchSourceRead

    /// Blocks SIGTERM and SIGINT for this thread and every thread it starts.
    public static func block() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGINT)
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Calls `handler` on `queue` for each SIGTERM or SIGINT.
    public init(queue: DispatchQueue, handler: @escaping @Sendable () -> Void) throws(RelayError) {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGINT)
        descriptor = signalfd(-1, &set, Int32(SFD_CLOEXEC | SFD_NONBLOCK))
        guard descriptor >= 0 else { throw RelayError("signalfd: \(String(cString: strerror(errno)))") }
        source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        let descriptor = descriptor
        source.setEventHandler {
            var info = signalfd_siginfo()
            while read(descriptor, &info, MemoryLayout<signalfd_siginfo>.size) == MemoryLayout<signalfd_siginfo>.size {
                handler()
            }
        }
        source.setCancelHandler { close(descriptor) }
        source.resume()
    }

    deinit { source.cancel() }
}
