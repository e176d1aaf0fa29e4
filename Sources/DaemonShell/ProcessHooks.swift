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
    var sleptSinceBoot: () -> Duration = BootClock.sleptSinceBoot
    /// Replaces the process with a fresh copy of itself (returns only when that failed).
    var restart: (_ log: (String) -> Void) -> Void = DaemonProcess.restart
    /// Ends the process with a status, once the daemon has stopped.
    var exit: (Int32) -> Void = { Glibc.exit($0) }
    /// Whether this is the systemd user unit (`ccrelay.service`), whose
    /// lifetime is systemd's to manage: it does not end itself with the session.
    var isTheUserUnit: Bool = ProcessHooks.runsAsTheUserUnit()

    /// True when this process's cgroup is a `ccrelay.service` (systemd puts each unit in its own).
    static func runsAsTheUserUnit() -> Bool {
        guard let file = fopen("/proc/self/cgroup", "re") else { return false }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 4096)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = line.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            if text.hasSuffix("/ccrelay.service\n") || text.contains("/ccrelay.service/") { return true }
        }
        return false
    }

    /// Half of `$WATCHDOG_USEC`, when systemd set it.
    static func systemdWatchdogPeriod() -> Duration? {
        guard let text = getenv("WATCHDOG_USEC").map({ String(cString: $0) }), let usec = Int(text), usec > 0 else { return nil }
        return .microseconds(usec / 2)
    }
}
