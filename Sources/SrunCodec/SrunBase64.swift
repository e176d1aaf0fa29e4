/// Base64 with Srun's alphabet (`LVoJPiCN2R8G90yg+hmFHuacZ1OWMnrsSTXkYpUq/3dlbfKwv6xztjI7DeBE45QA`), `=` padding kept.
///
/// It is RFC 4648 base64 with each character of the standard alphabet
/// replaced by the one at the same index here; `=` stays as it is.
public enum SrunBase64 {
    private static let alphabet = Array("LVoJPiCN2R8G90yg+hmFHuacZ1OWMnrsSTXkYpUq/3dlbfKwv6xztjI7DeBE45QA".utf8)
    /// Each byte's index in `alphabet`, or 0xFF.
    private static let indices: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        return table
    }()

    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        for start in stride(from: 0, to: bytes.count, by: 3) {
            let group = bytes[start..<min(start + 3, bytes.count)]
            let value = group.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (16 - 8 * $1.offset) }
            for index in 0..<4 {
                out.append(index <= group.count ? alphabet[Int(value >> (18 - 6 * index) & 63)] : UInt8(ascii: "="))
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// nil unless `text` is the exact encoding of some bytes: whole groups
    /// of four, Srun characters only, `=` only as the last one or two, and
    /// the bits a short group leaves over all zero.
    public static func decode(_ text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(characters.count / 4 * 3)
        for start in stride(from: 0, to: characters.count, by: 4) {
            let group = characters[start..<start + 4]
            let padding = group.reversed().prefix { $0 == UInt8(ascii: "=") }.count
            guard padding <= 2, padding == 0 || start + 4 == characters.count else { return nil }
            var value: UInt32 = 0
            for (index, character) in group.prefix(4 - padding).enumerated() {
                let sextet = indices[Int(character)]
                guard sextet != 0xFF else { return nil }
                value |= UInt32(sextet) << (18 - 6 * index)
            }
            guard value & ((UInt32(1) << (8 * padding)) - 1) == 0 else { return nil }
            out += (0..<3 - padding).map { UInt8(truncatingIfNeeded: value >> (16 - 8 * $0)) }
        }
        return out
    }
}
