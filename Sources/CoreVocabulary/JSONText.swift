/// JSON text for the relay messages and a Srun login's `info`, written in
/// the pure core (which has no Foundation; a message is a few fields):
/// strings escaped per RFC 8259, members in the order given, no spaces.
public enum JSONText {
    public static func string(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F || scalar.value == 0x2028 || scalar.value == 0x2029:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// A number as JSON writes it; one that is not finite (JSON has no word for it) as null.
    public static func number(_ value: Double) -> String { value.isFinite ? "\(value)" : "null" }

    /// An object of already-encoded values, in the given order.
    public static func object(_ members: [(String, String)]) -> String {
        "{" + members.map { string($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }

    public static func array(_ elements: [String]) -> String { "[" + elements.joined(separator: ",") + "]" }
}
