import CLinux
import EventLoop
#if canImport(Glibc)
import Glibc
#endif

/// Hears the wall clock being set (by hand, by NTP stepping it, after a
/// resume that skipped the sync): a timerfd on CLOCK_REALTIME armed for the
/// year 9999 with `TFD_TIMER_CANCEL_ON_SET`, whose read fails with ECANCELED
/// when the clock jumps. No wake-up of its own: it is readable only then.
/// What waits for a wall-clock time (quiet hours' end, a budget's free
/// slot) is decided again at once instead of when its monotonic timer fires.
///
/// Confinement: used only on `loop`.
final class WallClockWatch {
    private let descriptor: Int32
    private var watch: (any IOWatch)?

    /// Nil when the kernel will not give such a timer (then a jump is seen when the next timer fires).
    init?(loop: any EventScheduler, changed: @escaping () -> Void) {
        descriptor = timerfd_create(CLOCK_REALTIME, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
        guard descriptor >= 0 else { return nil }
        guard arm() else {
            close(descriptor)
            return nil
        }
        watch = loop.watch(descriptor, for: .readable) { [weak self] _ in
            guard let self else { return }
            var expirations: UInt64 = 0
            let count = read(self.descriptor, &expirations, MemoryLayout<UInt64>.size)
            // ECANCELED: the clock was set. Anything else (the year 9999 came): arm again all the same.
            if count < 0 && errno == EAGAIN { return }
            _ = self.arm()
            changed()
        }
    }

    deinit {
        watch?.cancel()
        close(descriptor)
    }

    private func arm() -> Bool {
        var spec = itimerspec()
        spec.it_value.tv_sec = 253_402_300_799
        return timerfd_settime(descriptor, Int32(TFD_TIMER_ABSTIME) | Int32(TFD_TIMER_CANCEL_ON_SET), &spec, nil) == 0
    }
}
