import CoreVocabulary

/// What waits in the outbox for one target, as the policy needs it.
public struct WaitingAlert: Sendable, Hashable {
    public var id: Int64
    public var title: String
    public var urgency: Urgency
    public var postedAt: Double

    public init(id: Int64, title: String, urgency: Urgency, postedAt: Double) {
        self.id = id
        self.title = title
        self.urgency = urgency
        self.postedAt = postedAt
    }
}

/// One message a target took: when, and the titles it carried.
public struct SentMessage: Sendable, Hashable {
    public var at: Double
    public var titles: [String]

    public init(at: Double, titles: [String]) {
        self.at = at
        self.titles = titles
    }
}

/// Why alerts wait for a target that could take them.
public enum HoldReason: String, Sendable, Hashable {
    case quietHours = "quiet-hours"
    case budget
    /// A title the target got in the last 10 minutes.
    case repeats = "repeat"
}

/// What a target's lane does next.
public enum ForwardingDecision: Sendable, Hashable {
    /// Send these alerts (oldest first) as one message: one alert as itself, several as a digest.
    case send([Int64])
    /// Nothing may go before this instant (seconds since the epoch), held for `reason`.
    case wait(until: Double, reason: HoldReason)
    /// Nothing waits.
    case idle
}

/// When alerts go to one target — pure, on the wall clock it is given:
/// - **quiet hours**: inside them only critical alerts go (none with
///   `quietCritical`); what waited goes as one digest when they end;
/// - **no repeats**: a title the target got in the last 10 minutes waits,
///   folded into the next message that goes (or its own, ×N, after the 10
///   minutes) — unless it is critical: a second logout goes at once;
/// - **a budget**: at most `count` messages in the window; over it, what
///   waits goes as one digest at the next free slot, never dropped; with one
///   slot left, a critical alert takes it alone (a logout is never held behind a digest);
///   of several that go at once, the critical ones go first, on their own.
/// Messages dated after `now` (the clock was set back) count for neither rule.
/// Alerts a target could not take (it was down) go one by one as before.
public struct ForwardingPolicy: Sendable, Hashable {
    public var budget: ForwardBudget?
    public var quiet: QuietRule?

    /// The same title is not sent to a target twice within this many seconds.
    public static let repeatWindow: Double = 600

    public init(budget: ForwardBudget? = nil, quiet: QuietRule? = nil) {
        self.budget = budget
        self.quiet = quiet
    }

    public func decide(waiting: [WaitingAlert], sent: [SentMessage], now: Double, utcOffset: Int) -> ForwardingDecision {
        guard !waiting.isEmpty else { return .idle }
        var wakes: [(at: Double, reason: HoldReason)] = []
        var eligible = waiting
        if let quiet, quiet.hours.contains(now, utcOffset: utcOffset) {
            eligible = waiting.filter { !quiet.holds($0.urgency, at: now, utcOffset: utcOffset) }
            wakes.append((quiet.hours.end(after: now, utcOffset: utcOffset), .quietHours))
        }
        // What a clock set back puts in the future counts for nothing: it would hold alerts for as long as the jump.
        let past = sent.filter { $0.at <= now }
        // Titles the target took in the last 10 minutes: alerts with them wait, to ride along — never a critical one.
        var lastSent: [String: Double] = [:]
        for message in past where message.at > now - Self.repeatWindow {
            for title in message.titles { lastSent[title] = max(lastSent[title] ?? 0, message.at) }
        }
        let repeats = eligible.filter { $0.urgency != .critical && lastSent[$0.title] != nil }
        let fresh = eligible.filter { $0.urgency == .critical || lastSent[$0.title] == nil }
        wakes += repeats.compactMap { lastSent[$0.title].map { ($0 + Self.repeatWindow, .repeats) } }
        var left = Int.max
        if let budget {
            let inWindow = past.map(\.at).filter { $0 > now - budget.window }.sorted()
            left = budget.count - inWindow.count
            if left <= 0 {
                // The next slot frees when the oldest message that fills the window leaves it.
                if !eligible.isEmpty { wakes.append((inWindow[inWindow.count - budget.count] + budget.window, .budget)) }
                return Self.waiting(wakes)
            }
        }
        guard let first = fresh.first else { return Self.waiting(wakes) }
        let critical = fresh.filter { $0.urgency == .critical }
        let heldByQuiet = quiet.map { quiet in fresh.filter { quiet.hours.contains($0.postedAt, utcOffset: utcOffset) } } ?? []
        let digest = fresh.count > left || heldByQuiet.count > 1
        // A logout is never one line of a digest, nor held behind one: the critical alerts go first, on their own.
        if (digest || left == 1), !critical.isEmpty, critical.count < fresh.count {
            return .send(Self.ids(critical, with: []))
        }
        if digest { return .send(Self.ids(fresh, with: repeats)) }
        // One at a time, with every other alert of its title, and the repeats waiting to ride along.
        return .send(Self.ids(fresh.filter { $0.title == first.title }, with: repeats))
    }

    private static func ids(_ alerts: [WaitingAlert], with repeats: [WaitingAlert]) -> [Int64] {
        (alerts + repeats).map(\.id).sorted()
    }

    private static func waiting(_ wakes: [(at: Double, reason: HoldReason)]) -> ForwardingDecision {
        wakes.min { $0.at < $1.at }.map { .wait(until: $0.at, reason: $0.reason) } ?? .idle
    }

    /// Messages left in the budget's window at `now` (nil: no budget); what is dated in the future does not count.
    public func budgetLeft(sent: [SentMessage], now: Double) -> Int? {
        budget.map { budget in max(0, budget.count - sent.filter { $0.at > now - budget.window && $0.at <= now }.count) }
    }
}
