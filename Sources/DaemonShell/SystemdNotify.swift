#if canImport(Glibc)
import DesktopServices
import Glibc
#endif

/// `sd_notify` without libsystemd: one datagram to `$NOTIFY_SOCKET`.
public enum SystemdNotify {
    /// Sends `state` (such as `READY=1` or `STATUS=online`); does nothing
    /// outside a systemd service.
    public static func send(_ state: String) {
        guard let socketPath = getenv("NOTIFY_SOCKET").map({ String(cString: $0) }), !socketPath.isEmpty else { return }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var pathBytes = Array(socketPath.utf8)
        if pathBytes.first == UInt8(ascii: "@") { pathBytes[0] = 0 }  // abstract namespace
        guard pathBytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in pathBytes.enumerated() { raw[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + pathBytes.count)
        let message = Array(state.utf8)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sockaddrPointer in
                sendto(fd, message, message.count, Int32(MSG_NOSIGNAL), sockaddrPointer, length)
            }
        }
    }
}
