#if canImport(Glibc)
import Glibc
#endif

/// Writes to the standard streams without buffering surprises between them.
enum Output {
    static func out(_ text: String) { write(1, text + "\n") }

    /// An error or warning on standard error, prefixed with the program name.
    static func error(_ text: String) { write(2, "ccrelay: " + text + "\n") }

    private static func write(_ fd: Int32, _ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            bytes = bytes.dropFirst(written)
        }
    }
}

/// Exit statuses of DESIGN.md.
enum ExitStatus {
    static let ok: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 2
}
