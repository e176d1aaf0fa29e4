/// A JSON value (RFC 8259) as read from a CC/1 reply.
indirect enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// The number's text, as written (so that integers of any size stay exact until bounded).
    case number(String)
    case string(String)
    case array([JSONValue])
    /// Members by name; of a name given twice, the last wins.
    case object([String: JSONValue])

    var string: String? { if case .string(let text) = self { text } else { nil } }

    subscript(_ name: String) -> JSONValue? { if case .object(let members) = self { members[name] } else { nil } }
}

/// Reads a whole JSON document from bytes, strictly (RFC 8259 grammar, valid
/// UTF-8, no trailing bytes but whitespace) and boundedly: nesting at most
/// `depthLimit` deep, every loop advancing over the input, so hostile input
/// costs time linear in its (already capped) size and never traps. Replaces
/// Foundation's JSONDecoder in the keep-alive path: a fraction of its cost.
struct JSONReader {
    static let depthLimit = 32

    private let bytes: [UInt8]
    private var index = 0

    /// The document in `bytes`, or nil when it is not valid JSON.
    static func parse(_ bytes: [UInt8]) -> JSONValue? {
        var reader = JSONReader(bytes: bytes)
        // A UTF-8 byte-order mark is tolerated, as JSON parsers may.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { reader.index = 3 }
        guard let value = reader.value(depth: 0) else { return nil }
        reader.skipWhitespace()
        return reader.index == bytes.count ? value : nil
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    private mutating func value(depth: Int) -> JSONValue? {
        guard depth <= Self.depthLimit else { return nil }
        skipWhitespace()
        switch current {
        case UInt8(ascii: "{")?: return object(depth: depth)
        case UInt8(ascii: "["): return array(depth: depth)
        case UInt8(ascii: "\""): return string().map(JSONValue.string)
        case UInt8(ascii: "t"): return literal("true", .bool(true))
        case UInt8(ascii: "f"): return literal("false", .bool(false))
        case UInt8(ascii: "n"): return literal("null", .null)
        case let byte? where byte == UInt8(ascii: "-") || (0x30...0x39).contains(byte): return number()
        default: return nil
        }
    }

    private mutating func literal(_ word: String, _ value: JSONValue) -> JSONValue? {
        let expected = Array(word.utf8)
        guard bytes.count - index >= expected.count, bytes[index..<(index + expected.count)].elementsEqual(expected) else { return nil }
        index += expected.count
        return value
    }

    private mutating func object(depth: Int) -> JSONValue? {
        index += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\""), let name = string() else { return nil }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { return nil }
            index += 1
            guard let member = value(depth: depth + 1) else { return nil }
            members[name] = member
            skipWhitespace()
            switch current {
            case UInt8(ascii: ",")?: index += 1
            case UInt8(ascii: "}")?:
                index += 1
                return .object(members)
            default: return nil
            }
        }
    }

    private mutating func array(depth: Int) -> JSONValue? {
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            guard let element = value(depth: depth + 1) else { return nil }
            elements.append(element)
            skipWhitespace()
            switch current {
            case UInt8(ascii: ",")?: index += 1
            case UInt8(ascii: "]")?:
                index += 1
                return .array(elements)
            default: return nil
            }
        }
    }

    /// `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`, kept as text.
    private mutating func number() -> JSONValue? {
        let start = index
        func digits() -> Int {
            let first = index
            while let byte = current, (0x30...0x39).contains(byte) { index += 1 }
            return index - first
        }
        if current == UInt8(ascii: "-") { index += 1 }
        if current == UInt8(ascii: "0") {
            index += 1
        } else if digits() == 0 {
            return nil
        }
        if current == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { return nil }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { return nil }
        }
        return .number(String(decoding: bytes[start..<index], as: UTF8.self))
    }

    /// A string literal: escapes resolved (`\uXXXX` with surrogate pairs; a
    /// lone surrogate becomes U+FFFD), no raw control characters, valid
    /// UTF-8; nil when any of that fails.
    private mutating func string() -> String? {
        index += 1
        var scalars = String.UnicodeScalarView()
        var runStart = index
        func flushRun() -> Bool {
            guard runStart < index else { return true }
            guard let run = String(validating: bytes[runStart..<index], as: UTF8.self) else { return false }
            scalars.append(contentsOf: run.unicodeScalars)
            return true
        }
        while let byte = current {
            switch byte {
            case UInt8(ascii: "\""):
                guard flushRun() else { return nil }
                index += 1
                return String(scalars)
            case UInt8(ascii: "\\"):
                guard flushRun() else { return nil }
                index += 1
                guard let escaped = escape() else { return nil }
                scalars.append(escaped)
                runStart = index
            case 0x00..<0x20:
                return nil
            default:
                index += 1
            }
        }
        return nil
    }

    /// The character after a backslash (the index is on it).
    private mutating func escape() -> Unicode.Scalar? {
        guard let byte = current else { return nil }
        index += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            guard let unit = hex4() else { return nil }
            if (0xD800..<0xDC00).contains(unit), bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"),
                bytes[index + 1] == UInt8(ascii: "u")
            {
                let mark = index
                index += 2
                if let low = hex4(), (0xDC00..<0xE000).contains(low) {
                    return Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
                }
                index = mark
            }
            // A surrogate without its other half: the replacement character, the text stands.
            return Unicode.Scalar(unit) ?? "\u{FFFD}"
        default: return nil
        }
    }

    private mutating func hex4() -> UInt32? {
        guard bytes.count - index >= 4 else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            index += 1
            let digit: UInt32
            switch byte {
            case 0x30...0x39: digit = UInt32(byte - 0x30)
            case 0x41...0x46: digit = UInt32(byte - 0x41 + 10)
            case 0x61...0x66: digit = UInt32(byte - 0x61 + 10)
            default: return nil
            }
            value = value << 4 | digit
        }
        return value
    }
}
