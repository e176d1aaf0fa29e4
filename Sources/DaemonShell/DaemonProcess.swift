import EventLoop
#if canImport(Glibc)
import Glibc
#endif

/// What the daemon process does about itself: restart in place, and the name it logs in with.
public enum DaemonProcess {
    /// Replaces this process with a fresh copy of itself (same PID, same
    /// arguments), which reads the configuration anew; returns only when that
    /// failed, after saying so.
    static func restart(log: (String) -> Void) {
        var arguments = CommandLine.arguments.map { strdup($0) } + [nil]
        execv("/proc/self/exe", &arguments)
        log("cannot restart (\(SystemError("execv /proc/self/exe", errno: errno))); restart the daemon to use the configuration")
    }

    /// This computer's host name: the `device` of a CC/1 login.
    public static var deviceName: String {
        var name = [CChar](repeating: 0, count: 256)
        gethostname(&name, name.count - 1)
        return name.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
