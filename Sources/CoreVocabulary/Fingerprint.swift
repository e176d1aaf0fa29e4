/// Eight hex digits of FNV-1a (32 bits) of some text: enough to tell two
/// keys or two sets of alerts apart in a name, never enough to recover them.
public enum Fingerprint {
    public static func of(_ text: String) -> String {
        var hash: UInt32 = 2_166_136_261
        for byte in text.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 8 - hex.count) + hex
    }
}
