#if canImport(Glibc)
import Glibc
#endif

/// A password read from standard input (`--password-stdin`,
/// `--p12-password-stdin`): one line, bounded before it is held in memory.
enum SecretInput {
    /// The longest password taken: a campus or bundle password is far shorter.
    static let limit = 1024

    enum Line: Equatable {
        case text(String)
        /// Longer than `limit` bytes (the wrong file on standard input?): nothing more is read.
        case tooLong
        /// Standard input ended before any byte, or the bytes are not UTF-8 text.
        case none
    }

    /// Reads one line of standard input, a byte at a time (nothing after its
    /// line end is consumed: a second password may follow), at most `limit` bytes.
    static func readLine() -> Line {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = read(0, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            guard count == 1 else { break }
            if byte == UInt8(ascii: "\n") { return text(bytes, ended: true) }
            guard bytes.count < limit else { return .tooLong }
            bytes.append(byte)
        }
        return bytes.isEmpty ? .none : text(bytes, ended: false)
    }

    private static func text(_ bytes: [UInt8], ended: Bool) -> Line {
        var bytes = bytes
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        guard !bytes.contains(0), let text = String(validating: bytes, as: UTF8.self) else { return .none }
        return .text(text)
    }
}
