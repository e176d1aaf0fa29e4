/// JSON read without Foundation: the top-level members of an object that
/// hold a string, a number or a boolean — what a push service's answer says
/// in `code`, `errcode`, `ok`, `msg` or `description`, what a Srun portal
/// answers — with nested objects and arrays stepped over; or a whole
/// document as a tree of bounded depth (a CC/1 reply and its notices).
/// Anything that is not a JSON object gives nil. Bounded by its input (an
/// answer is at most 64 KiB).
public enum JSONScan {
    /// A member's value; a number keeps its text (its size and form are the reader's to check).
    public enum Scalar: Sendable, Hashable {
        case string(String)
        case number(String)
        case bool(Bool)
        case null
    }

    /// A value of a document read whole.
    public indirect enum Value: Sendable, Hashable {
        case object([String: Value])
        case array([Value])
        case scalar(Scalar)
    }

    /// The members of the object that is the whole of `bytes` (white space
    /// and a UTF-8 byte-order mark around it allowed, a comma after its last
    /// member too), nested at most `depthLimit` deep; nil when anything is
    /// malformed, deeper, or a member's name is not UTF-8. A string value's
    /// invalid UTF-8 reads as U+FFFD.
    public static func document(_ bytes: [UInt8], depthLimit: Int = 16) -> [String: Value]? {
        var scanner = Scanner(bytes)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { scanner.at = 3 }
        scanner.skipSpace()
        guard scanner.at < bytes.count, bytes[scanner.at] == UInt8(ascii: "{"),
            case .object(let members) = scanner.tree(depth: depthLimit)
        else { return nil }
        scanner.skipSpace()
        return scanner.at < bytes.count ? nil : members
    }

    /// The members of the object `text` starts with; with `whole`, nil
    /// unless nothing but white space follows that object.
    public static func members(_ text: String, whole: Bool = false) -> [String: Scalar]? {
        var scanner = Scanner(Array(text.utf8))
        let members = scanner.object { $0.value() }
        scanner.skipSpace()
        return whole && scanner.at < scanner.bytes.count ? nil : members
    }

    /// An object of objects (`{"id":{"ip":"…"},…}`): each member object's
    /// scalar members; a member that is not an object is stepped over.
    public static func objects(_ text: String) -> [String: [String: Scalar]]? {
        var scanner = Scanner(Array(text.utf8))
        return scanner.object { scanner in
            guard scanner.at < scanner.bytes.count, scanner.bytes[scanner.at] == UInt8(ascii: "{") else {
                return scanner.value().map { _ in nil }
            }
            return scanner.object { $0.value() }.map { .some($0) }
        }
    }

    private struct Scanner {
        let bytes: [UInt8]
        var at = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        /// An object whose member values `element` reads: `.some(nil)` steps over one, nil is malformed.
        mutating func object<Value>(_ element: (inout Scanner) -> Value??) -> [String: Value]? {
            skipSpace()
            guard take(UInt8(ascii: "{")) else { return nil }
            var members: [String: Value] = [:]
            skipSpace()
            if take(UInt8(ascii: "}")) { return members }
            while true {
                skipSpace()
                guard let name = string(exact: true) else { return nil }
                skipSpace()
                guard take(UInt8(ascii: ":")) else { return nil }
                skipSpace()
                guard let value = element(&self) else { return nil }
                if let value { members[name] = value }
                skipSpace()
                if take(UInt8(ascii: ",")) {
                    skipSpace()
                    if take(UInt8(ascii: "}")) { return members }
                    continue
                }
                return take(UInt8(ascii: "}")) ? members : nil
            }
        }

        /// Any value as a tree, at most `depth` levels of objects and arrays; nil when malformed or deeper.
        mutating func tree(depth: Int) -> Value? {
            guard depth > 0, at < bytes.count else { return nil }
            switch bytes[at] {
            case UInt8(ascii: "{"): return object { $0.tree(depth: depth - 1).map { .some($0) } }.map(Value.object)
            case UInt8(ascii: "["): return array(depth: depth - 1).map(Value.array)
            default:
                guard case .some(.some(let scalar)) = value() else { return nil }
                return .scalar(scalar)
            }
        }

        /// An array whose elements are trees of at most `depth` levels.
        mutating func array(depth: Int) -> [Value]? {
            guard take(UInt8(ascii: "[")) else { return nil }
            var elements: [Value] = []
            skipSpace()
            if take(UInt8(ascii: "]")) { return elements }
            while true {
                skipSpace()
                guard let element = tree(depth: depth) else { return nil }
                elements.append(element)
                skipSpace()
                if take(UInt8(ascii: ",")) { continue }
                return take(UInt8(ascii: "]")) ? elements : nil
            }
        }

        /// A scalar, `.some(nil)` for a nested object or array (stepped over), nil when malformed.
        mutating func value() -> Scalar?? {
            guard at < bytes.count else { return nil }
            switch bytes[at] {
            case UInt8(ascii: "\""): return string().map { .string($0) }
            case UInt8(ascii: "{"), UInt8(ascii: "["): return stepOver() ? .some(nil) : nil
            case UInt8(ascii: "t"): return word("true") ? .bool(true) : nil
            case UInt8(ascii: "f"): return word("false") ? .bool(false) : nil
            case UInt8(ascii: "n"): return word("null") ? .null : nil
            default:
                let start = at
                while at < bytes.count, Self.isNumberByte(bytes[at]) { at += 1 }
                return at > start ? .number(String(decoding: bytes[start..<at], as: UTF8.self)) : nil
            }
        }

        /// Whether `byte` may be part of a number's text (its form is the reader's to check).
        static func isNumberByte(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."),
                UInt8(ascii: "e"), UInt8(ascii: "E"):
                true
            default: false
            }
        }

        /// Past a nested object or array, strings inside it respected.
        mutating func stepOver() -> Bool {
            var depth = 0
            while at < bytes.count {
                switch bytes[at] {
                case UInt8(ascii: "\""):
                    guard string() != nil else { return false }
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 {
                        at += 1
                        return true
                    }
                default: break
                }
                at += 1
            }
            return false
        }

        /// A string; with `exact`, nil when its bytes are not UTF-8 (else they read as U+FFFD).
        mutating func string(exact: Bool = false) -> String? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            // Most strings hold no escape: their bytes are the text, decoded once.
            var end = at
            while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\") { end += 1 }
            guard end < bytes.count else { return nil }
            if bytes[end] == UInt8(ascii: "\"") {
                defer { at = end + 1 }
                return Self.text(bytes[at..<end], exact: exact)
            }
            // The others are gathered as UTF-8, each escape written as its scalar's bytes. A
            // scalar's first byte never continues a sequence, so the gathered bytes are UTF-8
            // exactly when each run between escapes is.
            var text = Array(bytes[at..<end])
            at = end
            while at < bytes.count {
                let byte = bytes[at]
                at += 1
                switch byte {
                case UInt8(ascii: "\""): return Self.text(text[...], exact: exact)
                case UInt8(ascii: "\\"):
                    guard at < bytes.count else { return nil }
                    let escaped = bytes[at]
                    at += 1
                    switch escaped {
                    case UInt8(ascii: "n"): text.append(0x0A)
                    case UInt8(ascii: "t"): text.append(0x09)
                    case UInt8(ascii: "r"): text.append(0x0D)
                    case UInt8(ascii: "b"), UInt8(ascii: "f"): text.append(0x20)
                    case UInt8(ascii: "u"):
                        guard var value = hex4() else { return nil }
                        // A surrogate pair: the second half follows as another \u.
                        if (0xD800..<0xDC00).contains(value), at + 1 < bytes.count, bytes[at] == UInt8(ascii: "\\"),
                            bytes[at + 1] == UInt8(ascii: "u")
                        {
                            at += 2
                            guard let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
                            value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
                        }
                        text.append(contentsOf: (Unicode.Scalar(value) ?? "\u{FFFD}").utf8)
                    default: text.append(contentsOf: Unicode.Scalar(escaped).utf8)
                    }
                default: text.append(byte)
                }
            }
            return nil
        }

        /// UTF-8 bytes as text: with `exact`, nil when they are not UTF-8; else each invalid sequence reads as U+FFFD.
        static func text(_ utf8: ArraySlice<UInt8>, exact: Bool) -> String? {
            exact ? String(validating: utf8, as: UTF8.self) : String(decoding: utf8, as: UTF8.self)
        }

        /// Four hexadecimal digits, either case.
        mutating func hex4() -> UInt32? {
            guard at + 4 <= bytes.count else { return nil }
            var value: UInt32 = 0
            for byte in bytes[at..<at + 4] {
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return nil
                }
                value = value << 4 | UInt32(digit)
            }
            at += 4
            return value
        }

        mutating func word(_ text: StaticString) -> Bool {
            let matched = text.withUTF8Buffer { word in
                at + word.count <= bytes.count && bytes[at..<at + word.count].elementsEqual(word)
            }
            if matched { at += text.utf8CodeUnitCount }
            return matched
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard at < bytes.count, bytes[at] == byte else { return false }
            at += 1
            return true
        }

        mutating func skipSpace() {
            while at < bytes.count {
                switch bytes[at] {
                case 0x20, 0x09, 0x0A, 0x0D: at += 1
                default: return
                }
            }
        }
    }
}
