#if canImport(Glibc)
import Glibc
#endif

/// The wall clock (CLOCK_REALTIME) without Foundation: the journal's times
/// and the timestamps sent to the server.
public enum WallClock {
    /// Seconds since the Unix epoch.
    public static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// `seconds` (since the epoch, rounded down) as ISO 8601 in UTC, such as `2026-11-29T14:05:00Z`.
    public static func iso8601(_ seconds: Double) -> String {
        format(seconds, "%Y-%m-%dT%H:%M:%SZ", local: false) ?? "1970-01-01T00:00:00Z"
    }

    /// `seconds` as people read it here: local time to the minute, `2026-12-01 02:13`.
    public static func localMinute(_ seconds: Double) -> String { format(seconds, "%Y-%m-%d %H:%M", local: true) ?? "?" }

    /// `seconds` as local time of day, `14:02`.
    public static func localTime(_ seconds: Double) -> String { format(seconds, "%H:%M", local: true) ?? "?" }

    /// How far east of UTC the local clock is at `seconds` (tm_gmtoff), for quiet hours.
    public static func utcOffset(_ seconds: Double) -> Int {
        var time = time_t(seconds.isFinite ? max(0, min(seconds, 253_402_300_799)).rounded(.down) : 0)
        var parts = tm()
        guard localtime_r(&time, &parts) != nil else { return 0 }
        return Int(parts.tm_gmtoff)
    }

    /// strftime of `seconds`, bounded to the years 1970–9999 (any Double is safe).
    private static func format(_ seconds: Double, _ pattern: String, local: Bool) -> String? {
        var time = time_t(seconds.isFinite ? max(0, min(seconds, 253_402_300_799)).rounded(.down) : 0)
        var parts = tm()
        guard (local ? localtime_r(&time, &parts) : gmtime_r(&time, &parts)) != nil else { return nil }
        var text = [CChar](repeating: 0, count: 32)
        let length = strftime(&text, text.count, pattern, &parts)
        return String(decoding: text.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
