/// A point on the daemon's suspend-aware clock (CLOCK_BOOTTIME), as time since
/// boot. The shell reads the clock; `Session` only compares and adds.
public struct Instant: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var sinceBoot: Duration
    public init(sinceBoot: Duration) { self.sinceBoot = sinceBoot }
    public static func < (a: Instant, b: Instant) -> Bool { a.sinceBoot < b.sinceBoot }
    public static func + (a: Instant, b: Duration) -> Instant { Instant(sinceBoot: a.sinceBoot + b) }
    public static func - (a: Instant, b: Duration) -> Instant { Instant(sinceBoot: a.sinceBoot - b) }
    public static func - (a: Instant, b: Instant) -> Duration { a.sinceBoot - b.sinceBoot }
    public var description: String { "t+\(sinceBoot)" }
}
