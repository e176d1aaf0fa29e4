import CoreVocabulary
import Foundation
import Testing

/// `JSONScan.document`, the reader of CC/1's replies since the daemon has no
/// Foundation: what Foundation's JSONSerialization writes reads back as the
/// values written, and what is not one bounded JSON object is refused.
@Suite struct JSONDocumentTests {
    /// Whether `value` holds what `original` held before Foundation wrote it.
    func same(_ value: JSONScan.Value, _ original: Any) -> Bool {
        switch (value, original) {
        case (.object(let members), let b as [String: Any]):
            members.count == b.count && members.allSatisfy { key, value in b[key].map { same(value, $0) } ?? false }
        case (.array(let elements), let b as [Any]): elements.count == b.count && zip(elements, b).allSatisfy(same)
        case (.scalar(.bool(let a)), let b as Bool): a == b
        case (.scalar(.number(let text)), let b as Int): Int(text) == b
        case (.scalar(.number(let text)), let b as Double): Double(text) == b
        case (.scalar(.string(let a)), let b as String): a == b
        case (.scalar(.null), is NSNull): true
        default: false
        }
    }

    /// A random JSON value: nested objects and arrays, strings with escapes
    /// and every plane of Unicode, numbers of every form.
    func randomValue(_ generator: inout some RandomNumberGenerator, depth: Int) -> Any {
        let pick = Int.random(in: 0..<(depth > 0 ? 7 : 5), using: &generator)
        switch pick {
        case 0:
            let scalars = (0..<Int.random(in: 0..<12, using: &generator)).compactMap { _ in
                Unicode.Scalar([0x22, 0x5C, 0x0A, 0x01, 0x7F, 0x4E2D, 0x1F600, 0x2028, 0x41].randomElement(using: &generator)!)
            }
            return String(String.UnicodeScalarView(scalars))
        case 1: return Int.random(in: Int.min...Int.max, using: &generator)
        case 2: return Double.random(in: -1e300...1e300, using: &generator)
        case 3: return Bool.random(using: &generator)
        case 4: return NSNull()
        case 5:
            return Dictionary(uniqueKeysWithValues: (0..<Int.random(in: 0..<5, using: &generator)).map {
                ("k\($0)\u{4E2D}\"", randomValue(&generator, depth: depth - 1))
            })
        default: return (0..<Int.random(in: 0..<5, using: &generator)).map { _ in randomValue(&generator, depth: depth - 1) }
        }
    }

    @Test func whatFoundationWritesIsReadValueForValue() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            let members = Dictionary(uniqueKeysWithValues: (0..<4).map { ("m\($0)", randomValue(&generator, depth: 4)) })
            let text = try JSONSerialization.data(withJSONObject: members, options: [.fragmentsAllowed])
            let ours = try #require(JSONScan.document(Array(text)), "\(String(decoding: text, as: UTF8.self))")
            #expect(same(.object(ours), members), "\(String(decoding: text, as: UTF8.self))")
        }
    }

    @Test func anythingButOneObjectIsRefused() {
        let deep = String(repeating: "[", count: 17) + String(repeating: "]", count: 17)
        for text in ["", " ", "[]", "\"text\"", "1", "{", "{}{}", "{} x", "{\"a\":1,,}", "{\"a\" 1}", "{a:1}", "{\"a\":[1,}",
                     "{\"a\":nul}", "{\"a\":'b'}", "{\"a\":\(deep)}", "{\"a\":\"\\u12\"}", "{\"a\":\"open}",
                     // Four hexadecimal digits, nothing else (a number reader would take the sign).
                     "{\"a\":\"\\u+041\"}", "{\"a\":\"\\u-000\"}", "{\"a\":t}", "{\"a\":nulls}"] {
            #expect(JSONScan.document(Array(text.utf8)) == nil, "\(text.debugDescription)")
        }
        #expect(JSONScan.document([0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D]) == nil, "a name that is not UTF-8")
        #expect(JSONScan.document(Array(#"{"\u0041"#.utf8) + [0xFF] + Array(#"":1}"#.utf8)) == nil, "nor next to an escape")
    }

    @Test func whatIsToleratedIsReadSafely() throws {
        let nested = String(repeating: "[", count: 15) + String(repeating: "]", count: 15)
        #expect(JSONScan.document(Array("{\"a\":\(nested)}".utf8)) != nil, "sixteen levels in all are read")
        #expect(JSONScan.document(Array("\u{FEFF} {\"a\":1,} \n".utf8)) == ["a": .scalar(.number("1"))])
        let value = try #require(JSONScan.document(Array(#"{"a":"x"#.utf8) + [0xC3] + Array(#""}"#.utf8)))
        #expect(value == ["a": .scalar(.string("x\u{FFFD}"))], "a value's broken UTF-8 is shown, not trusted")
        #expect(JSONScan.document(Array(#"{"a":"\ud83d\ude00\ud800!"}"#.utf8)) == ["a": .scalar(.string("😀\u{FFFD}!"))])
    }

    @Test func numbersAreWrittenAsJSONReadsThem() throws {
        for number in [0, -0.5, 31.2304, 1e-5, 5e20, 1.7976931348623157e308] {
            let text = JSONText.object([("n", JSONText.number(number))])
            let read = try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Double])
            #expect(read["n"] == number, "\(text)")
        }
        #expect(JSONText.number(.infinity) == "null" && JSONText.number(.nan) == "null")
    }
}
