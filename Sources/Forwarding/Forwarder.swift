import CoreVocabulary

/// The forwarding lanes' rules, pure: one lane per `[relay]` target takes
/// what waits in its outbox oldest first, one request at a time. What goes
/// when is the target's `ForwardingPolicy` (held alerts wait for the lane
/// timer, armed for when they may go, then go as one digest); a target that
/// fails is left alone with back-off (`ForwardBackoff`) and tried at once
/// on a flush; each alert reaches each target at most once, late ones marked
/// late. A target that refuses every message, or a message refused for good,
/// raises `relay-refused`, closed once every target takes them again.
/// The shell reads the outbox and posts (`ForwarderEffect`) and says what
/// came of it (`ForwarderEvent`); `DaemonCore` composes it.
public struct Forwarder: Sendable {
    /// One target's queue: what it is doing and how it has been failing.
    struct Lane: Sendable {
        let target: ForwardTarget
        let policy: ForwardingPolicy
        /// A request is out (or its outbox is being read).
        var busy = false
        var failures = 0
        /// Backing off after a failure: the lane timer is armed for the retry.
        var backingOff = false
        /// The failure already logged for this episode.
        var reported: String?
    }

    private var lanes: [Lane]
    private let selection: ForwardSelection
    /// The machine's name, carried by every message.
    private let host: String
    private let localizer: Localizer
    /// The targets refusing now, by outbox name.
    private var refusing: Set<String> = []

    /// What a lane reads of its outbox at a time.
    public static let readLimit = 200
    /// The longest a held lane sleeps before it looks again (a clock set back is heard anyway).
    static let longestHold: Double = 86_400 * 2

    public init(targets: [ForwardTarget], selection: ForwardSelection, quiet: QuietRule?, host: String, localizer: Localizer) {
        lanes = targets.map { Lane(target: $0, policy: ForwardingPolicy(budget: $0.budget, quiet: quiet)) }
        self.selection = selection
        self.host = host
        self.localizer = localizer
    }

    /// The targets, in `[relay]`'s order.
    public var targets: [ForwardTarget] { lanes.map(\.target) }

    /// The outbox names of the targets `alert` goes to (none when it is not selected).
    public func destinations(for alert: Alert) -> [String] {
        selection.forwards(alert) ? lanes.map(\.target.name) : []
    }

    /// How far back a lane's `.outboxRead` must list the messages `target` took.
    public func sentWindow(_ target: String) -> Double {
        let budget = lanes.first { $0.target.name == target }?.policy.budget
        return max(budget?.window ?? 0, ForwardingPolicy.repeatWindow)
    }

    /// For the status: why alerts wait for `target` though it could take them ("" when none do), and its budget left.
    public func hold(of target: String, waiting: [OutboxItem], sent: [SentMessage], now: Double, utcOffset: Int)
        -> (held: String, budgetLeft: Int?)
    {
        guard let lane = lanes.first(where: { $0.target.name == target }) else { return ("", nil) }
        let decision = lane.policy.decide(waiting: waiting.map(Self.waiting), sent: sent, now: now, utcOffset: utcOffset)
        let held = if case .wait(_, let reason) = decision, !lane.busy, !lane.backingOff { reason.rawValue } else { "" }
        return (held, lane.policy.budgetLeft(sent: sent, now: now))
    }

    /// Handles one event and returns what to do, in order.
    public mutating func handle(_ event: ForwarderEvent) -> [ForwarderEffect] {
        switch event {
        case .queued, .wallClockSet:
            return lanes.indices.filter { !lanes[$0].backingOff }.flatMap { look(at: $0) }
        case .flush:
            return lanes.indices.flatMap { index -> [ForwarderEffect] in
                let wasBackingOff = lanes[index].backingOff
                lanes[index].backingOff = false
                return (wasBackingOff ? [.disarmLaneTimer(target: lanes[index].target.name)] : []) + look(at: index)
            }
        case .laneTimerFired(let target):
            guard let index = lane(target) else { return [] }
            lanes[index].backingOff = false
            return look(at: index)
        case .outboxRead(let target, let waiting, let sent, let now, let utcOffset):
            guard let index = lane(target) else { return [] }
            return read(index, waiting: waiting, sent: sent, now: now, utcOffset: utcOffset)
        case .answered(let target, let items, let answer):
            guard let index = lane(target) else { return [] }
            lanes[index].busy = false
            return answered(index, items, answer) + [.queuesChanged]
        }
    }

    private func lane(_ target: String) -> Int? { lanes.firstIndex { $0.target.name == target } }

    /// An idle lane reads its outbox (busy until it decided).
    private mutating func look(at index: Int) -> [ForwarderEffect] {
        guard !lanes[index].busy else { return [] }
        lanes[index].busy = true
        return [.readOutbox(target: lanes[index].target.name)]
    }

    private mutating func read(_ index: Int, waiting: [OutboxItem], sent: [SentMessage], now: Double, utcOffset: Int) -> [ForwarderEffect] {
        let lane = lanes[index]
        switch lane.policy.decide(waiting: waiting.map(Self.waiting), sent: sent, now: now, utcOffset: utcOffset) {
        case .idle:
            lanes[index].busy = false
            return []
        case .wait(let until, _):
            // Held: woken when they may go (the quiet's end, a free slot, a repeat's ten minutes).
            lanes[index].busy = false
            let seconds = min(max(until - now, 0), Self.longestHold)
            return [.armLaneTimer(target: lane.target.name, after: .milliseconds(Int64(seconds * 1000) + 50))]
        case .send(let ids):
            let chosen = waiting.filter { ids.contains($0.alertID) }
            let time = { LocalClock.hourMinute($0, utcOffset: utcOffset) }
            // A digest carries what the service shows whole; the rest go in the next message.
            let fitting = ForwardDigest.fitting(
                chosen.map { forwarded($0, now: now) }, in: lane.target.service.messageRoom, time: time, localize: localizer)
            let items = Array(chosen.prefix(fitting))
            let alerts = items.map { forwarded($0, now: now) }
            guard let first = alerts.first else {
                lanes[index].busy = false
                return []
            }
            let message = alerts.count == 1 ? first : ForwardDigest.alert(alerts, time: time, localize: localizer)
            return [.post(target: lane.target.name, items: items, message: message)]
        }
    }

    /// An outbox item as the message carries it; late when an attempt failed before, or it waited long.
    private func forwarded(_ item: OutboxItem, now: Double) -> ForwardedAlert {
        ForwardedAlert(
            kind: item.kind, title: item.title, body: item.body, urgency: item.urgency, postedAt: item.postedAt, key: item.key,
            host: host, late: item.attempts > 0 || now - item.queuedAt > ForwardedAlert.lateAfter)
    }

    private static func waiting(_ item: OutboxItem) -> WaitingAlert {
        WaitingAlert(id: item.alertID, title: item.title, urgency: item.urgency, postedAt: item.postedAt)
    }

    /// What the target said of the message carrying `items` (one alert, or a digest of several).
    private mutating func answered(_ index: Int, _ items: [OutboxItem], _ answer: ForwardAnswer) -> [ForwarderEffect] {
        let target = lanes[index].target
        switch answer.verdict {
        case .delivered:
            var effects: [ForwarderEffect] = [.markDelivered(items, answer: answer.text)]
            lanes[index].failures = 0
            if lanes[index].reported != nil { effects.append(.log("forwarding to \(target.displayName) works again")) }
            lanes[index].reported = nil
            if refusing.remove(target.name) != nil && refusing.isEmpty { effects.append(.closeRefusal) }
            return effects + look(at: index)
        case .refusedForGood(let problem):
            // This message cannot go (too long, a form the service cannot take): the rest of the queue can.
            var effects: [ForwarderEffect] = [
                .markRefused(items, problem: problem),
                .log("\(target.displayName) refused an alert (\(problem)); it is not sent there again, the next one goes"),
            ]
            if refusing.insert(target.name).inserted { effects.append(.raiseRefusal(target: target.displayName, answer: problem)) }
            return effects + look(at: index)
        case .retry(let problem), .refused(let problem):
            var effects: [ForwarderEffect] = [.markFailed(items, problem: problem)]
            lanes[index].failures = min(lanes[index].failures + 1, 1000)
            let delay = ForwardBackoff.delay(afterFailures: lanes[index].failures)
            if lanes[index].reported == nil {
                effects.append(.log(
                    "cannot forward alerts to \(target.displayName): \(problem); they wait in the outbox, retrying in \(delay.components.seconds) s"))
            }
            lanes[index].reported = problem
            lanes[index].backingOff = true
            effects.append(.armLaneTimer(target: target.name, after: delay))
            // A wrong URL, key or token: the user must act.
            if case .refused = answer.verdict, refusing.insert(target.name).inserted {
                effects.append(.raiseRefusal(target: target.displayName, answer: problem))
            }
            return effects
        }
    }
}
