import COpenSSL

/// Lowercase hex digests through libcrypto: the login's `hmd5`
/// (HMAC-MD5 keyed with the challenge, or plain MD5) and its `chksum` and
/// the DM logout's `sign` (SHA-1).
public enum SrunDigest {
    public static func hmacMD5Hex(key: [UInt8], message: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        // An empty key or message still needs an address (BIT's clients sign an empty message).
        let made = (key.isEmpty ? [0] : key).withUnsafeBufferPointer { keyPointer in
            (message.isEmpty ? [0] : message).withUnsafeBufferPointer { messagePointer in
                HMAC(EVP_md5(), keyPointer.baseAddress, Int32(key.count), messagePointer.baseAddress, message.count, &digest, &length)
            }
        }
        return made == nil ? "" : hex(digest.prefix(Int(length)))
    }

    public static func md5Hex(_ bytes: [UInt8]) -> String { digest(bytes, EVP_md5()) }

    public static func sha1Hex(_ bytes: [UInt8]) -> String { digest(bytes, EVP_sha1()) }

    private static func digest(_ bytes: [UInt8], _ type: OpaquePointer?) -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let made = (bytes.isEmpty ? [0] : bytes).withUnsafeBufferPointer {
            EVP_Digest($0.baseAddress, bytes.count, &digest, &length, type, nil)
        }
        return made == 1 ? hex(digest.prefix(Int(length))) : ""
    }

    private static func hex(_ bytes: ArraySlice<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
    }
}
