import EventLoop
import DesktopServices
#if canImport(Glibc)
import Glibc
#endif

/// What the daemon process does about itself: restart in place, and the name it logs in with.
public enum DaemonProcess {
    /// Run as root, the account that owns the system service's state folder
    /// when that is another account (the service's own): root must not open
    /// the journal there. Nil when not root, or the folder is root's or not there yet.
    public static func foreignOwnerOfStateFolder(instance: String?) -> String? {
        guard geteuid() == 0 else { return nil }
        let store = SystemService.storePath(instance: instance)
        let folder = String(store[..<(store.lastIndex(of: "/") ?? store.startIndex)])
        var info = stat()
        guard lstat(folder, &info) == 0, info.st_uid != 0 else { return nil }
        return getpwuid(info.st_uid).map { String(cString: $0.pointee.pw_name) } ?? "uid \(info.st_uid)"
    }

    /// Replaces this process with a fresh copy of itself (same PID, same
    /// arguments), which reads the configuration anew; returns only when that
    /// failed, after saying so.
    static func restart(log: (String) -> Void) {
        closeOnExec()
        // The program's path, not /proc/self/exe: after an upgrade replaced the
        // file, /proc/self/exe is still the old, deleted one.
        let program = executablePath ?? "/proc/self/exe"
        var arguments = CommandLine.arguments.map { strdup($0) } + [nil]
        execv(program, &arguments)
        log("cannot restart (\(SystemError("execv \(program)", errno: errno))); restart the daemon by hand: systemctl --user restart ccrelay")
    }

    /// Where this program was started from, read once (call it early, before
    /// an upgrade can replace the file): the file watched for upgrades, and
    /// the one a restart runs.
    static let executablePath: String? = {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let path = String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return path.hasSuffix(" (deleted)") ? String(path.dropLast(" (deleted)".count)) : path
    }()

    /// Marks every descriptor above standard error close-on-exec: the
    /// fresh copy opens what it needs itself. Not every library opens its
    /// descriptors so (libcurl's sockets and its wake-up pair did not), and
    /// each one left open would outlive every later restart: a leak of three
    /// descriptors and a live connection to the CC server per changed configuration.
    static func closeOnExec() {
        guard let folder = opendir("/proc/self/fd") else { return }
        var descriptors: [Int32] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if let descriptor = Int32(name), descriptor > 2 { descriptors.append(descriptor) }
        }
        closedir(folder)
        for descriptor in descriptors {
            let flags = fcntl(descriptor, F_GETFD)
            if flags >= 0 { _ = fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) }
        }
    }

    /// This computer's host name: the `device` of a CC/1 login.
    public static var deviceName: String {
        var name = [CChar](repeating: 0, count: 256)
        gethostname(&name, name.count - 1)
        return name.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
