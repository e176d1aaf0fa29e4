import EventLoop
#if canImport(Glibc)
import Glibc
#endif

/// What the daemon asks of its process and of the machine, as a port: the
/// systemd notifications, the watchdog period systemd asked for, the time
/// the machine has slept, and restarting in place. The shell's unit tests
/// give their own, to check these rules without a process.
struct ProcessHooks {
    /// `sd_notify` (READY, STATUS, WATCHDOG, STOPPING).
    var notify: (String) -> Void = SystemdNotify.send
    /// How often to feed systemd's watchdog: half of `WatchdogSec=` (nil: not asked).
    var watchdogPeriod: Duration? = ProcessHooks.systemdWatchdogPeriod()
    /// CLOCK_BOOTTIME minus CLOCK_MONOTONIC: it grows only while the machine sleeps.
    var sleptSinceBoot: () -> Duration = BootTimer.sleptSinceBoot
    /// Replaces the process with a fresh copy of itself (returns only when that failed).
    var restart: (_ log: (String) -> Void) -> Void = DaemonProcess.restart

    /// Half of `$WATCHDOG_USEC`, when systemd set it.
    static func systemdWatchdogPeriod() -> Duration? {
        guard let text = getenv("WATCHDOG_USEC").map({ String(cString: $0) }), let usec = Int(text), usec > 0 else { return nil }
        return .microseconds(usec / 2)
    }
}
