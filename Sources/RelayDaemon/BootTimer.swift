import CLinux
import Dispatch
import Relay
import RelayCore
#if canImport(Glibc)
import Glibc
#endif

/// The suspend-aware clock (CLOCK_BOOTTIME) and the daemon's one timer: a
/// timerfd on that clock, watched by a dispatch source, so a deadline set
/// before a suspend fires right after resume instead of an uptime later.
public final class BootTimer: @unchecked Sendable {
    // Confinement: `source` and the timerfd are used only on `queue`.
    private let fd: Int32
    private let source: DispatchSourceRead

    /// Now on CLOCK_BOOTTIME.
    public static func now() -> Instant {
        var time = timespec()
        clock_gettime(CLOCK_BOOTTIME, &time)
        return Instant(sinceBoot: .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec))
    }

    /// Time spent asleep since boot: CLOCK_BOOTTIME minus CLOCK_MONOTONIC.
    public static func sleptSinceBoot() -> Duration {
        var monotonic = timespec()
        clock_gettime(CLOCK_MONOTONIC, &monotonic)
        return now().sinceBoot - (.seconds(monotonic.tv_sec) + .nanoseconds(monotonic.tv_nsec))
    }

    /// Creates the timer; `fired` runs on `queue` each time it expires.
    public init(queue: DispatchQueue, fired: @escaping @Sendable () -> Void) throws(RelayError) {
        fd = timerfd_create(CLOCK_BOOTTIME, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
        guard fd >= 0 else { throw RelayError("cannot create a CLOCK_BOOTTIME timer: \(String(cString: strerror(errno)))") }
        source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        let fd = self.fd
        source.setEventHandler {
            var expirations: UInt64 = 0
            guard read(fd, &expirations, 8) == 8 else { return }
            fired()
        }
        source.setCancelHandler { close(fd) }
        source.resume()
    }

    deinit { source.cancel() }

    /// Arms the timer for `instant` (absolute on CLOCK_BOOTTIME); one in the past fires at once.
    public func arm(at instant: Instant) {
        let (seconds, attoseconds) = instant.sinceBoot.components
        var spec = itimerspec()
        spec.it_value.tv_sec = max(Int(seconds), 0)
        spec.it_value.tv_nsec = Int(attoseconds / 1_000_000_000)
        if spec.it_value.tv_sec == 0 && spec.it_value.tv_nsec == 0 { spec.it_value.tv_nsec = 1 }
        timerfd_settime(fd, Int32(TFD_TIMER_ABSTIME), &spec, nil)
    }

    public func disarm() {
        var spec = itimerspec()
        timerfd_settime(fd, 0, &spec, nil)
    }
}
