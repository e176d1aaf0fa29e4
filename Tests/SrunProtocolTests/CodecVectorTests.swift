@testable import CCRelayCore
@testable import SrunCodec
import Testing

/// Every peer vector of the Srun protocol notes (§8.1), and the codec half of
/// the end-to-end login vectors (§8.3), in both directions where the
/// direction exists. Each test names where its vectors come from.
@Suite struct CodecVectorTests {
    static let k1 = bytes("aa0edd0fff7dd9f1f0ae4e981ec0114c7b0bf6f67c4895bed4f4ac634e97ecf2")

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    static func unhex(_ text: String) -> [UInt8] {
        let digits = Array(text.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
    }

    /// `b64(xe(message, key)) == expected`, and back.
    func expectInfo(_ message: String, key: [UInt8], _ expected: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let encoded = XEncode.encode(Self.bytes(message), key: key)
        #expect(SrunBase64.encode(encoded) == expected, sourceLocation: sourceLocation)
        #expect(SrunBase64.decode(expected).flatMap { XEncode.decode($0, key: key) } == Self.bytes(message), sourceLocation: sourceLocation)
    }

    static let goAuthingBase64Vectors: [([UInt8], String)] = [
        (Array("1".utf8), "9+=="), (Array("2".utf8), "9S=="), (Array("34".utf8), "9z+="), (Array("567".utf8), "0FZ7"),
        ([0x00], "LL=="), ([0x00, 0x00], "LLL="), ([0xFF, 0x00, 0x00], "AvLL"), ([0x01], "L+=="),
        ([0x01] + Array("==!@#$%^&*()".utf8), "LFt52HLkRourRX//8+=="), ([0x01] + Array("aAbB_+=-".utf8) + [0x11], "LaiVZYRs8ztfP+=="),
    ]

    @Test("GoAuthing libauth/coding_test.go:9-31, base64 (10)", arguments: goAuthingBase64Vectors)
    func goAuthingBase64(_ input: [UInt8], _ expected: String) {
        #expect(SrunBase64.encode(input) == expected)
        #expect(SrunBase64.decode(expected) == input)
    }

    @Test("GoAuthing libauth/coding_test.go:9-31, xencode (5)")
    func goAuthingXEncode() {
        #expect(SrunBase64.encode(XEncode.encode([], key: Self.k1)) == "", "the empty message encodes to nothing")
        expectInfo("1", key: Self.k1, "NmsaR0fCm5H=")
        expectInfo("agfawegwq12834eqrge", key: Self.k1, "DAxHygvRUjlDyJjmvChIzuavMsjy7B9L")
        expectInfo("agfawegwq12834eqrge", key: Self.bytes(String(repeating: "0", count: 64)), "TOdQ9ggF2y/mskS6Orkg+eUZIok9vqJr")
        expectInfo("9$02%8r89)(&22{}we[f]|s", key: Self.k1, "kCG+xmvGAhCV717Y80Fk0o1YJ8SYvBdnUmQoqS==")
    }

    @Test("fontlos/buaa-api src/crypto/test.rs test_xencoder (3)")
    func buaaAPI() {
        let key = Self.bytes("8e4e83f094924913acc6a9d5149015aafc898bd38ba8f45be6bd0f9edd450403")
        #expect("{SRBX1}" + SrunBase64.encode(XEncode.encode(Self.bytes("HelloWorld"), key: key)) == "{SRBX1}9GAfJJT7wdSzFKeNohuv6+==")
        #expect(SrunBase64.decode("9GAfJJT7wdSzFKeNohuv6+==").flatMap { XEncode.decode($0, key: key) } == Self.bytes("HelloWorld"))
        #expect(SrunDigest.hmacMD5Hex(key: Self.bytes("Key"), message: Self.bytes("HelloWorld")) == "219e14bef981f117479a7695dacb10c7")
        #expect(SrunDigest.sha1Hex(Self.bytes("HelloWorld")) == "db8ac1c259eb89d4a131b253bacfca5f319d54f2")
    }

    @Test("cjdem/SRunPy-GUI tests/test_protocol.py:9-18 (4)")
    func srunPyGUI() {
        let key = Self.bytes("0123456789abcdef")
        #expect(SrunDigest.hmacMD5Hex(key: key, message: Self.bytes("secret")) == "fea03f8ea7355c811537d43482714fca")
        #expect(SrunDigest.sha1Hex(Self.bytes("srunpy")) == "eb9551c86d492e9088173d9c01260a962cbb4c6f")
        #expect(Self.hex(XEncode.encode(Self.bytes("message"), key: key)) == "5dc69dfcfaa4b393aba18efd")
        #expect(XEncode.decode(Self.unhex("5dc69dfcfaa4b393aba18efd"), key: key) == Self.bytes("message"))
        expectInfo("message", key: key, "cMOnAgdYbeyl/ZE5")
    }

    @Test("campusnet tests (a public portal script) (2)")
    func campusNet() {
        #expect(SrunBase64.encode(Self.bytes("CampusNet SRun info")) == "+IifMNuzFUut2i0mnaDSOaeUWv==")
        #expect(SrunBase64.decode("+IifMNuzFUut2i0mnaDSOaeUWv==") == Self.bytes("CampusNet SRun info"))
        expectInfo(
            #"{"username":"test","password":"pass","ip":"10.1.2.3","acid":"8","enc_ver":"srun_bx1"}"#,
            key: Self.bytes(String(repeating: "0123456789abcdef", count: 4)),
            "bBkzWXCkz1O2rY3owbSjTm17PM20o0rVW89iXDg6ZX32BwIwIE5hF7oOkB9mjATYVbCOIx7LDq+5mfdflJa6VgDttR+g3/GYErDMb/bvs1KlGlb1kSuWByxL0s4=")
    }

    @Test("protocol tests (a public portal script): a short key is zero-padded (1)")
    func shortKey() {
        #expect(Self.hex(XEncode.encode(Self.bytes("hello"), key: Self.bytes("token"))) == "bb00d00c966e78bfb80ef138")
        #expect(XEncode.decode(Self.unhex("bb00d00c966e78bfb80ef138"), key: Self.bytes("token")) == Self.bytes("hello"))
    }

    @Test("Srun tests (a public portal script) (2)")
    func srunTests() {
        #expect(SrunDigest.hmacMD5Hex(key: Self.bytes("abc123"), message: []) == "ecf123a3f89fd7bf95f57e1664627493")
        let json = #"{"username":"201626203044@cmcc","password":"15879684798qq","ip":"10.128.96.249","acid":"1","enc_ver":"srun_bx1"}"#
        let key = Self.bytes("e6843f26b8544327a3a25978dd3c5f89e6b745df1732993b88fe082c13a34cb9")
        let info = SrunBase64.encode(XEncode.encode(Self.bytes(json), key: key))
        #expect(info.hasPrefix("13GwOQhj"), "only the prefix is asserted by the source")
        #expect(SrunBase64.decode(info).flatMap { XEncode.decode($0, key: key) } == Self.bytes(json))
    }

    /// The Srun protocol notes §8.3: three independent implementations agree on these.
    static let token = bytes("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
    static let browserJSON = #"{"username":"2024000001","password":"s3cret pw!","ip":"10.1.2.3","acid":"1","enc_ver":"srun_bx1"}"#

    @Test("the Srun protocol notes §8.3: xencode and info of the login JSON, both key orders")
    func endToEndInfo() {
        let expectedHex = "8b960e276d4cc467ac879d3dfcd723076dd910b421241ad2d4ff0341c6b7b8ef8761d065c599254c44dd4ac3790eb0a7f66261ed858d6f5e3cc09706adf4fcdcba5f703622aa953b0130bd3acf7c9b811bebb12228f1c59979df6f0b3b07f4efe51e3c130cba8a49"
        #expect(Self.hex(XEncode.encode(Self.bytes(Self.browserJSON), key: Self.token)) == expectedHex)
        #expect(XEncode.decode(Self.unhex(expectedHex), key: Self.token) == Self.bytes(Self.browserJSON))
        expectInfo(Self.browserJSON, key: Self.token,
                   "XeZyRIj96CrbTet5A0MkVI71PG+TRVlmjg4J+MO7KyQNZnVp61YpFPFnmb0eJloq5URTEZa0WjD4vRMClsF47G3sMJZXd3HELFo5yb54UDPWBEPX8gNiUcqsWvbEVAFwehD4PvxBXYY=")
        expectInfo(#"{"acid":"1","enc_ver":"srun_bx1","ip":"10.1.2.3","password":"s3cret pw!","username":"2024000001"}"#, key: Self.token,
                   "0Y+fpk1ye9PcMXzpiX2pRF251a3NgoAOkErxPXqfHEFV9ksQeQuc4VBrrZ8PcIWQH1TzUC1Pq6GK01QRqdgyH2qpK9cpc+AjI3cOf070Hol0BXIYyECWbyky5ND0R949WDBVmeIftoH=")
    }

    @Test("the Srun protocol notes §8.3: hmd5 in its three forms")
    func endToEndDigests() {
        #expect(SrunDigest.hmacMD5Hex(key: Self.token, message: Self.bytes("s3cret pw!")) == "0efbbecd17df0cd963697d0182b3e430")
        #expect(SrunDigest.hmacMD5Hex(key: Self.token, message: []) == "12b7df856574be74a29fa124bd70e85d")
        #expect(SrunDigest.md5Hex(Self.bytes("s3cret pw!")) == "1c5813c28bd194d1953f93d397974640")
    }

    @Test("decode refuses what no encoding gives")
    func decodeRefuses() {
        for length in [0, 4, 7, 9, 13] {
            #expect(XEncode.decode([UInt8](repeating: 7, count: length), key: Self.k1) == nil, "\(length) bytes")
        }
        // "1" under K1, read with another key: the stored length comes out above 4.
        let encoded = XEncode.encode(Self.bytes("1"), key: Self.k1)
        #expect(XEncode.decode(encoded, key: Self.bytes("another key")) == nil)
        // Two words that claim 0, 4 and 9 bytes: 5…8 are the lengths two words can hold.
        for claimed: UInt32 in [0, 4, 9] {
            var words: [UInt32] = [0x6463_6261, 0x6867_6665, claimed]
            XEncode.encrypt(&words, key: Self.k1)
            let data = words.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (8 * $0)) } }
            #expect(XEncode.decode(data, key: Self.k1) == nil, "a stored length of \(claimed)")
        }
        var words: [UInt32] = [0x6463_6261, 0x6867_6665, 5]
        XEncode.encrypt(&words, key: Self.k1)
        #expect(XEncode.decode(words.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (8 * $0)) } }, key: Self.k1)
                == Self.bytes("abcde"))
        for text in ["9+=", "9===", "=9+=", "9+=9", "9,==", "9/=="] {
            #expect(SrunBase64.decode(text) == nil, "\(text)")
        }
    }

    @Test("decode(encode(x)) == x for every length 1…200, with keys of 0…80 bytes")
    func roundTrip() {
        var generator = SplitMix64(seed: 20_240_001)
        for length in 1...200 {
            for _ in 0..<3 {
                let message = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
                let key = (0..<Int.random(in: 0...80, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                let encoded = XEncode.encode(message, key: key)
                #expect(encoded.count == (length + 3) / 4 * 4 + 4)
                #expect(XEncode.decode(encoded, key: key) == message, "length \(length), key \(key.count) bytes")
                #expect(SrunBase64.decode(SrunBase64.encode(encoded)) == encoded)
            }
        }
    }
}

/// The core's seedable generator (SplitMix64), for `random(in:using:)`: the same numbers on every run.
extension SplitMix64: RandomNumberGenerator {}
