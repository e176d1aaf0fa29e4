import CCRelayCore
import CoreVocabulary

/// A request's query string: names and values in the order the portal's
/// script sends them, each value percent-encoded (letters, digits and
/// `-._~` as they are), and the JSONP callback name and timestamp.
enum SrunQuery {
    static func string(_ items: [(name: String, value: String)]) -> String {
        items.map { $0.name + "=" + PercentEncoding.encode($0.value) }.joined(separator: "&")
    }

    /// A callback name as jQuery makes them, `jQuery<digits>_<milliseconds>`.
    static func callback(milliseconds: Int64, random: UInt64) -> String {
        "jQuery1124\(String(random % 10_000_000_000_000_000, radix: 10))_\(milliseconds)"
    }
}
