#if canImport(Glibc)
import Glibc
#endif

/// What of a portal's text may be shown or logged: bounded, one line, no
/// control characters and no bidirectional overrides (which could make a
/// log line read differently from what it holds).
enum SrunText {
    static func clean(_ text: String, limit: Int) -> String {
        var kept = String.UnicodeScalarView()
        var count = 0
        for scalar in text.unicodeScalars.prefix(limit * 4) where count < limit {
            let shown: Unicode.Scalar? = scalar == "\n" || scalar == "\t" ? " " : isShown(scalar.value) ? scalar : nil
            if let shown {
                kept.append(shown)
                count += 1
            }
        }
        return String(kept)
    }

    /// Not a control character (C0, DEL, C1) nor a bidirectional embedding, override or isolate.
    private static func isShown(_ value: UInt32) -> Bool {
        value >= 0x20 && value != 0x7F && !(0x80..<0xA0).contains(value) && !(0x202A...0x202E).contains(value)
            && !(0x2066...0x2069).contains(value)
    }

    /// `text` when it is an IPv4 or IPv6 address literal (as `inet_pton` reads them), else nil.
    static func address(_ text: String?) -> String? {
        guard let text, (2...45).contains(text.utf8.count) else { return nil }
        var buffer = [UInt8](repeating: 0, count: 16)
        return inet_pton(AF_INET, text, &buffer) == 1 || inet_pton(AF_INET6, text, &buffer) == 1 ? text : nil
    }

    /// True for 1…`limit` ASCII digits.
    static func isDigits(_ text: String, limit: Int = 9) -> Bool {
        (1...limit).contains(text.utf8.count) && text.utf8.allSatisfy { (0x30...0x39).contains($0) }
    }

    /// True for printable ASCII without spaces, 1…`limit` bytes.
    static func isToken(_ text: String, limit: Int) -> Bool {
        (1...limit).contains(text.utf8.count) && text.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }
}
