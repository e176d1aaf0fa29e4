import ForwardingTransport
import Testing

/// HMAC-SHA256 through libcrypto, as DingTalk and Feishu check it (issue 26).
@Suite struct MessageSignatureTests {
    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() }

    @Test func theRFC4231VectorsHold() {
        // RFC 4231, test case 2.
        #expect(Self.hex(MessageSignature.hmacSHA256(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)))
            == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        // An empty message (Feishu signs one): Python's hmac.new(b"key", b"", sha256).
        #expect(Self.hex(MessageSignature.hmacSHA256(key: Array("key".utf8), message: []))
            == "5d5d139563c95b5967b9bd9a8c9b233a9dedb45072794cd232dc1b74832607d0")
    }
}
