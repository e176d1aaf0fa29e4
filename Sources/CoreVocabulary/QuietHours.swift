/// Quiet hours (`[alerts] quiet = 23:20-06:20, 12:30-13:30`): local-time
/// ranges, a range may span midnight.
public struct QuietHours: Sendable, Hashable {
    /// Minutes of the day: from `start` (inclusive) to `end` (exclusive), across midnight when `end < start`.
    public struct Range: Sendable, Hashable {
        public var start: Int
        public var end: Int

        func contains(_ minute: Int) -> Bool { start < end ? (start..<end).contains(minute) : minute >= start || minute < end }
    }

    public var ranges: [Range]

    public init(ranges: [Range]) { self.ranges = ranges }

    /// `HH:MM-HH:MM[, HH:MM-HH:MM …]` (at most 8 ranges); nil when it is not that.
    public init?(_ text: String) {
        var ranges: [Range] = []
        for part in text.split(separator: ",") {
            let ends = part.split(separator: "-").map { $0.filter { !$0.isWhitespace } }
            guard ends.count == 2, let start = Self.minute(ends[0]), let end = Self.minute(ends[1]), start != end else { return nil }
            ranges.append(Range(start: start, end: end))
        }
        guard (1...8).contains(ranges.count) else { return nil }
        self.ranges = ranges
    }

    private static func minute(_ text: String) -> Int? {
        let parts = text.split(separator: ":")
        guard parts.count == 2, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isASCII) }), let hour = Int(parts[0]), let minute = Int(parts[1]),
            (0..<24).contains(hour), (0..<60).contains(minute)
        else { return nil }
        return hour * 60 + minute
    }

    /// Whether `time` (seconds since the epoch) falls in quiet hours, `utcOffset` seconds east of UTC.
    public func contains(_ time: Double, utcOffset: Int) -> Bool {
        ranges.contains { $0.contains(Self.minuteOfDay(time, utcOffset)) }
    }

    /// When the quiet that `time` falls in ends (the first minute out of every range).
    public func end(after time: Double, utcOffset: Int) -> Double {
        var probe = (time / 60).rounded(.down) * 60
        for _ in 0..<(24 * 60) where contains(probe, utcOffset: utcOffset) { probe += 60 }
        return probe
    }

    static func minuteOfDay(_ time: Double, _ utcOffset: Int) -> Int {
        let local = Int64(time.isFinite ? max(0, min(time, 253_402_300_799)) : 0) + Int64(utcOffset)
        return Int(((local % 86_400) + 86_400) % 86_400 / 60)
    }
}

/// Quiet hours as one rule for bubbles and forwarding targets alike
/// (`[alerts] quiet`, `quiet-critical`): inside the hours an alert below
/// critical — any alert, with `quiet-critical` — is neither popped up nor
/// forwarded; it is journaled and in the tray, and forwarded when they end.
public struct QuietRule: Sendable, Hashable {
    public var hours: QuietHours
    /// `quiet-critical`: a logout is held too.
    public var critical: Bool

    public init(hours: QuietHours, critical: Bool = false) {
        self.hours = hours
        self.critical = critical
    }

    /// Whether an alert of `urgency` is held at `time` (seconds since the epoch, `utcOffset` seconds east of UTC).
    public func holds(_ urgency: Urgency, at time: Double, utcOffset: Int) -> Bool {
        (urgency != .critical || critical) && hours.contains(time, utcOffset: utcOffset)
    }
}
