@testable import CCProtocol
import Foundation
import Testing

/// The JSON reader that replaced JSONDecoder in the reply path, and the
/// request bodies written without JSONEncoder: RFC 8259, strict and bounded.
@Suite struct JSONReaderTests {
    func parse(_ text: String) -> JSONValue? { JSONReader.parse(Array(text.utf8)) }

    @Test func documentsAreReadWithEscapesNumbersAsTextAndTheLastOfADuplicateName() {
        let value = parse(#" {"a": [1, -0.5e+3, true, false, null], "s": "q\"\\\/\b\f\n\r\t\u00e9\u4e2d\ud83d\ude00", "a2": {}, "x": 1, "x": 2} "#)
        #expect(value?["a"] == .array([.number("1"), .number("-0.5e+3"), .bool(true), .bool(false), .null]))
        #expect(value?["s"]?.string == "q\"\\/\u{08}\u{0C}\n\r\té中😀")
        #expect(value?["a2"] == .object([:]))
        #expect(value?["x"] == .number("2"))
        #expect(parse("[]") == .array([]) && parse("\"\"") == .string("") && parse("0") == .number("0"))
        #expect(parse("\u{FEFF}{}") == .object([:]), "a byte-order mark is tolerated")
        #expect(parse(#"{"n": 92233720368547758070}"#)?["n"] == .number("92233720368547758070"), "kept exact until bounded")
    }

    @Test func anythingThatIsNotJSONIsRefusedWholeNeverTrapping() {
        let bad = [
            "", " ", "{", "}", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "[01]", "[1.]", "[.5]", "[1e]", "[-]", "[+1]",
            "[tru]", "[nul]", "\"unterminated", "\"tab\there\"", "\"\\x\"", "\"\\u12\"", "\"\\u12g4\"", "{} {}", "[1] x",
            "'single'", "NaN", "Infinity", "[1,2", "{\"a\":}",
        ]
        for text in bad { #expect(parse(text) == nil, "\(text.debugDescription)") }
        #expect(JSONReader.parse([0x22, 0xFF, 0xFE, 0x22]) == nil, "invalid UTF-8 in a string")
        #expect(JSONReader.parse([0x22, 0xC3, 0x22]) == nil, "a cut UTF-8 sequence")
    }

    @Test func nestingIsBoundedAndALoneSurrogateIsReplaced() {
        let deep = String(repeating: "[", count: 200) + String(repeating: "]", count: 200)
        #expect(parse(deep) == nil, "deeper than \(JSONReader.depthLimit): refused, no stack exhausted")
        let fine = String(repeating: "[", count: 20) + String(repeating: "]", count: 20)
        #expect(parse(fine) != nil)
        #expect(parse(#""a\ud800b""#)?.string == "a\u{FFFD}b")
        #expect(parse(#""\udc00""#)?.string == "\u{FFFD}")
        #expect(parse(#""\ud800\u0041""#)?.string == "\u{FFFD}A", "a high surrogate followed by a non-surrogate")
    }

    @Test func requestBodiesAreTheJSONTheyShouldBe() throws {
        let login = LoginRequest(client: ClientInfo(version: "0.1.0"), device: "dorm \"pc\"\n", user: "2023", password: "p\\ä\u{1}")
        let decoded = try #require(JSONSerialization.jsonObject(with: Data(login.json.utf8)) as? [String: Any])
        #expect(decoded["device"] as? String == "dorm \"pc\"\n")
        #expect(decoded["password"] as? String == "p\\ä\u{1}")
        #expect((decoded["client"] as? [String: String]) == ["name": "ccrelay", "version": "0.1.0", "platform": "linux"])
        #expect(!LoginRequest(client: ClientInfo(version: "1"), device: "d").json.contains("user"), "absent fields are left out")
        let fix = LocationFix(lat: 31.2304, lon: 121.4737, accuracy: 12.5, timestamp: "2026-12-01T02:13:00Z")
        let keepAlive = try #require(
            JSONSerialization.jsonObject(with: Data(KeepAliveRequest(seq: UInt64(1) << 53, location: fix).json.utf8)) as? [String: Any])
        #expect((keepAlive["seq"] as? NSNumber)?.uint64Value == UInt64(1) << 53)
        let location = try #require(keepAlive["location"] as? [String: Any])
        #expect(location["lat"] as? Double == 31.2304 && location["lon"] as? Double == 121.4737 && location["accuracy"] as? Double == 12.5)
        #expect(KeepAliveRequest(seq: 7).json == #"{"seq":7}"#)
    }
}
