#if canImport(Glibc)
import Glibc
#endif

/// Where the running program lives: the anchor for the files installed or
/// built beside it (catalogues, the daemon, the demo).
public enum ExecutableLocation {
    /// The folder of `/proc/self/exe`, or nil when it cannot be read.
    public static var directory: String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let path = String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
    }
}
