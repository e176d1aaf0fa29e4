/// Srun's xencode (an XXTEA variant, not standard XXTEA) and its inverse.
///
/// The portal's `info` field is `"{SRBX1}" + SrunBase64.encode(XEncode.encode(json, key: token))`.
/// Srun's mix adds its three terms where XXTEA xors two of them, so an
/// off-the-shelf XXTEA gives other bytes. Words are little-endian; the
/// message length travels as one more word; the key is zero-padded to four
/// words and only its first 16 bytes count. All arithmetic wraps modulo 2^32.
public enum XEncode {
    /// The golden-ratio constant the portal's script writes as `0x86014019 | 0x183639A0`.
    private static let delta: UInt32 = 0x9E37_79B9

    public static func encode(_ message: [UInt8], key: [UInt8]) -> [UInt8] {
        guard !message.isEmpty else { return [] }
        var v = words(message) + [UInt32(truncatingIfNeeded: message.count)]
        encrypt(&v, key: key)
        return bytes(v)
    }

    /// The cipher over words (at least two), whatever the last one holds.
    static func encrypt(_ v: inout [UInt32], key: [UInt8]) {
        let k = keyWords(key)
        let n = v.count - 1
        var z = v[n]
        var sum: UInt32 = 0
        for _ in 0..<rounds(v.count) {
            sum &+= delta
            let e = Int((sum >> 2) & 3)
            for p in 0...n {
                let y = v[p < n ? p + 1 : 0]
                v[p] &+= mix(y: y, z: z, sum: sum, key: k[(p & 3) ^ e])
                z = v[p]
            }
        }
    }

    /// nil when `data` is not a valid encoding (length, or the stored length out of range).
    public static func decode(_ data: [UInt8], key: [UInt8]) -> [UInt8]? {
        guard data.count >= 8, data.count % 4 == 0 else { return nil }
        var v = words(data)
        let k = keyWords(key)
        let n = v.count - 1
        let rounds = rounds(v.count)
        var sum = UInt32(truncatingIfNeeded: rounds) &* delta
        var y = v[0]
        for _ in 0..<rounds {
            let e = Int((sum >> 2) & 3)
            for p in stride(from: n, through: 0, by: -1) {
                let z = v[p > 0 ? p - 1 : n]
                v[p] &-= mix(y: y, z: z, sum: sum, key: k[(p & 3) ^ e])
                y = v[p]
            }
            sum &-= delta
        }
        let length = Int(v[n])
        guard (4 * n - 3...4 * n).contains(length) else { return nil }
        return Array(bytes(Array(v[..<n])).prefix(length))
    }

    /// Srun's mix: `(z>>5 ^ y<<2) + ((y>>3 ^ z<<4) ^ (sum ^ y)) + (k ^ z)`, logical shifts.
    private static func mix(y: UInt32, z: UInt32, sum: UInt32, key: UInt32) -> UInt32 {
        ((z >> 5) ^ (y << 2)) &+ (((y >> 3) ^ (z << 4)) ^ (sum ^ y)) &+ (key ^ z)
    }

    private static func rounds(_ wordCount: Int) -> Int { 6 + 52 / wordCount }

    /// The key's first four words, zero-padded.
    private static func keyWords(_ key: [UInt8]) -> [UInt32] {
        let k = words(Array(key.prefix(16)))
        return k + [UInt32](repeating: 0, count: 4 - k.count)
    }

    /// Little-endian words, the last one zero-padded.
    private static func words(_ bytes: [UInt8]) -> [UInt32] {
        stride(from: 0, to: bytes.count, by: 4).map { start in
            bytes[start..<min(start + 4, bytes.count)].enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (8 * $1.offset) }
        }
    }

    private static func bytes(_ words: [UInt32]) -> [UInt8] {
        words.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (8 * $0)) } }
    }
}
