import CoreVocabulary
/// When the daemon writes its metrics textfile: only when it publishes a
/// snapshot (it never wakes up for the file), and then only when what the
/// file holds would change — at once for a change of state, outside access,
/// badge, queues or certificate; for the drop counters and the session's
/// expiry alone (every keep-alive moves it) at the first publication a
/// minute or more after the last write. A write that failed is tried again
/// at once only for a change that is written at once, else a minute later:
/// a folder that cannot be written costs one attempt a minute at most.
public struct MetricsWritePolicy: Sendable {
    /// The least time between two writes for a change of counters alone.
    public static let counterInterval: Duration = .seconds(60)

    /// What the last write (or attempt) held, and when it was made.
    private var last: (facts: MetricsFacts, at: Instant, failed: Bool)?

    public init() {}

    /// Whether to write `facts` at `now`.
    public func shouldWrite(_ facts: MetricsFacts, at now: Instant) -> Bool {
        guard let last else { return true }
        if facts.steady != last.facts.steady { return true }
        guard facts != last.facts || last.failed else { return false }
        return now - last.at >= Self.counterInterval
    }

    /// Whether a change of the counters alone would be written at `now` (a minute
    /// since the last write, or none yet): until then a publication that moves
    /// nothing else needs no look at the facts at all.
    public func countersDue(at now: Instant) -> Bool {
        guard let last else { return true }
        return now - last.at >= Self.counterInterval
    }

    /// A write of `facts` was tried at `now`.
    public mutating func attempted(_ facts: MetricsFacts, at now: Instant, succeeded: Bool) {
        last = (facts, now, !succeeded)
    }

    /// Forgets the last write (the file was removed): the next publication writes.
    public mutating func reset() { last = nil }
}
