import CoreVocabulary
import Forwarding

/// A `Forwarder` driven as the shell drives it, on a virtual wall clock: an
/// in-memory outbox per target, the posts it asks for (answered by the test),
/// one timer per lane, and what it raised, closed and logged.
final class LaneRig {
    var forwarder: Forwarder
    /// The wall clock (seconds since the epoch); UTC, no offset.
    var now: Double = 1_780_000_000
    var outbox: [String: [OutboxItem]] = [:]
    var delivered: [String: [SentMessage]] = [:]
    /// The posts under way, by target, and every post made.
    var pending: [String: [OutboxItem]] = [:]
    var posts: [(target: String, message: ForwardedAlert)] = []
    var timers: [String: Double] = [:]
    var armed: [(target: String, after: Duration)] = []
    var raised: [String] = []
    var closed = 0
    var logged: [String] = []
    var refused: [Int64] = []
    private var nextID: Int64 = 1

    init(_ targets: [String] = ["ntfy", "gotify"], quiet: QuietRule? = nil) throws {
        let urls = ["ntfy": "https://ntfy.campus.example/ccrelay-20231234", "gotify": "https://gotify.campus.example/message?token=AbC"]
        let made = try targets.map { key throws(ForwardTargetProblem) in try ForwardTarget(key: key, url: urls[key] ?? "") }
        forwarder = Forwarder(targets: made, selection: .standard, quiet: quiet, host: "lab-pc", localizer: .english)
    }

    /// The outbox name of the target of service `key`.
    func name(_ key: String) -> String { forwarder.targets.first { $0.name.hasPrefix(key) }!.name }

    /// An alert journaled now and queued for every target.
    func raise(_ title: String, urgency: Urgency = .critical) {
        for target in forwarder.targets {
            outbox[target.name, default: []].append(OutboxItem(
                alertID: nextID, target: target.name, key: "key-\(nextID)", attempts: 0, queuedAt: now, kind: .loggedOut, title: title,
                body: title, urgency: urgency, postedAt: now))
        }
        nextID += 1
        send(.queued)
    }

    func send(_ event: ForwarderEvent) {
        var events = [event]
        while !events.isEmpty {
            for effect in forwarder.handle(events.removeFirst()) { carryOut(effect, &events) }
        }
    }

    private func carryOut(_ effect: ForwarderEffect, _ events: inout [ForwarderEvent]) {
        switch effect {
        case .readOutbox(let target):
            let window = forwarder.sentWindow(target)
            events.append(.outboxRead(
                target: target, waiting: outbox[target] ?? [], sent: (delivered[target] ?? []).filter { $0.at >= now - window },
                now: now, utcOffset: 0))
        case .post(let target, let items, let message):
            for item in items { update(item) { $0.attempts += 1 } }
            pending[target] = items
            posts.append((target, message))
        case .armLaneTimer(let target, let after):
            timers[target] = now + Double(after.components.seconds) + Double(after.components.attoseconds) / 1e18
            armed.append((target, after))
        case .disarmLaneTimer(let target): timers[target] = nil
        case .markDelivered(let items, _):
            for item in items { outbox[item.target]?.removeAll { $0.alertID == item.alertID } }
            if let first = items.first { delivered[first.target, default: []].append(SentMessage(at: now, titles: items.map(\.title))) }
        case .markFailed: break
        case .markRefused(let items, _):
            for item in items { outbox[item.target]?.removeAll { $0.alertID == item.alertID } }
            refused += items.map(\.alertID)
        case .log(let line): logged.append(line)
        case .raiseRefusal(let target, _): raised.append(target)
        case .closeRefusal: closed += 1
        case .queuesChanged: break
        }
    }

    private func update(_ item: OutboxItem, _ change: (inout OutboxItem) -> Void) {
        guard let index = outbox[item.target]?.firstIndex(where: { $0.alertID == item.alertID }) else { return }
        change(&outbox[item.target]![index])
    }

    /// `key`'s target answers its pending post with `verdict`.
    func answer(_ key: String, _ verdict: ForwardVerdict = .delivered) {
        let target = name(key)
        guard let items = pending.removeValue(forKey: target) else { return }
        send(.answered(target: target, items: items, answer: ForwardAnswer(status: verdict == .delivered ? 200 : 0, text: "", verdict: verdict)))
    }

    /// The wall clock moves on; lane timers due by then fire, in order.
    func advance(by seconds: Double) {
        let end = now + seconds
        while let (target, due) = timers.filter({ $0.value <= end }).min(by: { $0.value < $1.value }) {
            now = due
            timers[target] = nil
            send(.laneTimerFired(target: target))
        }
        now = end
    }

    func postCount(_ key: String) -> Int { posts.filter { $0.target == name(key) }.count }
}
