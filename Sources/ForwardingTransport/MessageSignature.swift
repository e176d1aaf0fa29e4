import COpenSSL

/// HMAC-SHA256 through libcrypto: how DingTalk and Feishu bots check that
/// a message comes from who holds the secret: the `MessageSigner` the daemon and
/// `relay test` give `ForwardTarget.request`.
public enum MessageSignature {
    @Sendable public static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        // An empty key or message still needs an address (Feishu signs an empty message).
        let keyBytes = key.isEmpty ? [0] : key
        let messageBytes = message.isEmpty ? [0] : message
        let made = keyBytes.withUnsafeBufferPointer { keyPointer in
            messageBytes.withUnsafeBufferPointer { messagePointer in
                HMAC(EVP_sha256(), keyPointer.baseAddress, Int32(key.count), messagePointer.baseAddress, message.count, &digest, &length)
            }
        }
        return made == nil ? [] : Array(digest.prefix(Int(length)))
    }
}
