/// Message text as the services take it: cut to what they show (by UTF-8
/// bytes or by UTF-16 units, whole characters, `…` where it was cut), and base64.
enum MessageText {
    /// `text` in at most `bytes` UTF-8 bytes, whole characters, `…` where it was cut.
    static func cut(_ text: String, bytes: Int) -> String {
        cut(text, limit: bytes, ellipsis: 3) { $0.utf8.count }
    }

    /// `text` in at most `utf16` UTF-16 code units — what Telegram and
    /// ServerChan count (an emoji outside the BMP is two) — whole characters, `…` where it was cut.
    static func cut(_ text: String, utf16: Int) -> String {
        cut(text, limit: utf16, ellipsis: 1) { $0.utf16.count }
    }

    /// Whole characters while their `size` fits in `limit` with the ellipsis's; a
    /// character larger than the rest of the room (a long combining sequence) ends the text.
    private static func cut(_ text: String, limit: Int, ellipsis: Int, size: (Character) -> Int) -> String {
        guard text.reduce(0, { $0 + size($1) }) > limit else { return text }
        var kept = ""
        var used = 0
        for character in text {
            let next = size(character)
            guard used + next <= limit - ellipsis else { break }
            kept.append(character)
            used += next
        }
        return kept + "…"
    }

    static func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            let value = chunk.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (16 - 8 * UInt32($1.offset)) }
            for position in 0..<4 {
                out.append(position <= chunk.count ? alphabet[Int(value >> (18 - 6 * UInt32(position)) & 0x3F)] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}
