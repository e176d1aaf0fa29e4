import EventLoop
import SessionLogic

/// The session's timer: a loop timer on the suspend-aware clock (CLOCK_BOOTTIME), so a deadline set before a suspend fires right
/// after resume instead of an uptime later.
final class BootTimer {
    private let timer: any LoopTimer

    /// Time spent asleep since boot: CLOCK_BOOTTIME minus CLOCK_MONOTONIC.
    static func sleptSinceBoot() -> Duration { BootClock.sleptSinceBoot() }

    /// Creates the timer (disarmed); `fired` runs on `loop` each time it expires.
    init(loop: any EventScheduler, fired: @escaping () -> Void) {
        timer = loop.makeTimer(fired)
    }

    /// Arms the timer for `instant` (absolute on CLOCK_BOOTTIME); one in the past fires at once.
    func arm(at instant: Instant) { timer.arm(at: instant.sinceBoot) }

    func disarm() { timer.disarm() }
}
