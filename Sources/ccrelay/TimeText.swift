#if canImport(Glibc)
import Glibc
#endif

/// Times as the CLI prints them.
enum TimeText {
    /// "2026-11-29 17:30:01" in local time, for people.
    static func local(_ epoch: Double) -> String { format(epoch, utc: false, separator: " ", suffix: "") }

    /// "2026-11-29T17:30:01Z", for JSON.
    static func iso8601(_ epoch: Double) -> String { format(epoch, utc: true, separator: "T", suffix: "Z") }

    /// "17:30:01" now, local time.
    static func clock() -> String { String(local(Double(time(nil))).suffix(8)) }

    private static func format(_ epoch: Double, utc: Bool, separator: String, suffix: String) -> String {
        var seconds = time_t(epoch.rounded(.down))
        var parts = tm()
        if utc { gmtime_r(&seconds, &parts) } else { localtime_r(&seconds, &parts) }
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))" + separator
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))" + suffix
    }
}
