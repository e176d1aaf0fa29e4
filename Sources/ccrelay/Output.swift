import FoundationEssentials
import CCRelayCore
import CoreVocabulary
#if canImport(Glibc)
import Glibc
#endif

/// Writes to the standard streams without buffering surprises between them.
enum Output {
    static func out(_ text: String) { write(1, text + "\n") }
    /// A question on standard output, the answer typed after it on the same line.
    static func prompt(_ text: String) { write(1, text) }

    /// An error or warning on standard error, prefixed with the program name.
    static func error(_ text: String) { write(2, "ccrelay: " + text + "\n") }

    /// One JSON document on standard output (sorted keys, so that output is stable).
    static func json<T: Encodable>(_ value: T) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        if let data = try? encoder.encode(value) { out(String(decoding: data, as: UTF8.self)) }
    }

    /// Text from the server or the journal made safe for a terminal: control
    /// characters (ESC sequences, CR, BEL, C1) and bidirectional overrides
    /// are removed, tabs and newlines become spaces. `--json` escapes instead.
    static func printable(_ text: String) -> String { PrintableText.oneLine(text) }

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

/// Terminal colour: only when standard output is a terminal, never with
/// `NO_COLOR` set (no-color.org) or `TERM=dumb`.
enum Style {
    static let enabled: Bool = {
        guard isatty(1) != 0 else { return false }
        if let noColor = getenv("NO_COLOR"), noColor.pointee != 0 { return false }
        return getenv("TERM").map { String(cString: $0) } != "dumb"
    }()

    static func bold(_ text: String) -> String { paint(text, "1") }
    static func dim(_ text: String) -> String { paint(text, "2") }
    static func red(_ text: String) -> String { paint(text, "31") }
    static func green(_ text: String) -> String { paint(text, "32") }
    static func yellow(_ text: String) -> String { paint(text, "33") }

    private static func paint(_ text: String, _ code: String) -> String {
        enabled ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }
}

/// Exit statuses of docs/contracts.md.
enum ExitStatus {
    static let ok: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 2
    static let daemonNotRunning: Int32 = 3
}
