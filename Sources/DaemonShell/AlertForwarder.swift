import AlertJournal
import CurlTransport
import CCProtocol
import DesktopServices
import EventLoop
import CCRelayCore
import CoreVocabulary
import Forwarding
import ForwardingTransport
#if canImport(Glibc)
import Glibc
#endif

/// Forwards journaled alerts off the machine (`[relay]`): the alerts the
/// selection names are queued in the store's outbox by the transaction that
/// journals them; each target then takes them oldest first, one request at
/// a time, through its own `ForwardTransport` on the daemon's loop. A target
/// that fails is retried with back-off (`ForwardBackoff`) and at once when the
/// campus session or the network comes back; each alert reaches each target
/// at most once (marked delivered when it answers, with an idempotency key
/// for the rare repeat after a crash), late ones marked late. A target that
/// refuses them (a 4xx answer: a wrong URL or token, which waiting does not
/// fix) raises the `relay-refused` alert, closed once every target takes them.
/// What goes when is each target's `ForwardingPolicy` (quiet hours, no
/// repeats within 10 minutes, its budget): held alerts wait in the outbox,
/// a timer armed for when they may go (none while nothing is held), and go
/// as one digest.
///
/// Confinement: used only on the daemon's loop.
final class AlertForwarder {
    /// One target's queue: what it is doing and how it has been failing.
    private final class Lane {
        let target: ForwardTarget
        let transport: any ForwardTransport
        let policy: ForwardingPolicy
        var busy = false
        /// Armed while alerts are held (quiet hours, a budget, a repeat) for when they may go.
        var hold: (any LoopTimer)?
        var failures = 0
        /// Backing off after a failure: `retry` is armed.
        var backingOff = false
        var retry: (any LoopTimer)?
        /// The failure already logged for this episode.
        var reported: String?

        init(target: ForwardTarget, transport: any ForwardTransport, policy: ForwardingPolicy) {
            self.target = target
            self.transport = transport
            self.policy = policy
        }
    }

    private let lanes: [Lane]
    private let selection: ForwardSelection
    private let loop: any EventScheduler
    private let host: String
    private let store: () -> AlertStore?
    private let storeFailed: (StoreError, String) -> Void
    private let log: (String) -> Void
    /// Raises or closes the `relay-refused` alert.
    var onRefusal: ((AlertSubject?) -> Void)?
    /// A queue changed (an alert delivered or failed): the status shows the new summaries.
    var onQueuesChanged: (() -> Void)?
    /// The targets refusing now, by outbox name.
    private var refusing: Set<String> = []

    init(targets: [ForwardTarget], selection: ForwardSelection, quiet: QuietRule? = nil,
         loop: any EventScheduler, host: String,
         store: @escaping () -> AlertStore?, storeFailed: @escaping (StoreError, String) -> Void,
         log: @escaping (String) -> Void, transport: (ForwardTarget) -> any ForwardTransport) {
        lanes = targets.map {
            Lane(target: $0, transport: transport($0), policy: ForwardingPolicy(budget: $0.budget, quiet: quiet))
        }
        self.selection = selection
        self.loop = loop
        self.host = host
        self.store = store
        self.storeFailed = storeFailed
        self.log = log
    }

    /// The outbox names of the targets `alert` goes to (none when it is not selected).
    func destinations(for alert: Alert) -> [String] {
        selection.forwards(alert) ? lanes.map(\.target.name) : []
    }

    /// New alerts were queued (or the daemon started with some waiting):
    /// every idle target not backing off takes the next.
    func kick() {
        for lane in lanes where !lane.backingOff { send(lane) }
    }

    /// The campus session or the network is back: targets backing off try at once.
    func flush() {
        for lane in lanes {
            lane.retry?.disarm()
            lane.backingOff = false
            send(lane)
        }
    }

    /// Each target's queue, last delivery, budget left and why alerts are held, for `GetStatus`.
    func summaries() -> [ForwardingSummary] {
        guard !lanes.isEmpty, let store = store() else { return [] }
        let now = loop.wallClock
        do {
            let summaries = try store.outboxSummary(for: lanes.map(\.target.name))
            return try zip(lanes, summaries).map { lane, summary throws(StoreError) in
                let next = try next(for: lane, in: store, at: now)
                let held = if case .wait(_, let reason) = next.decision, !lane.busy, !lane.backingOff { reason.rawValue } else { "" }
                return ForwardingSummary(
                    target: lane.target.displayName, queued: summary.queued, lastDelivered: summary.lastDeliveredAt,
                    lastError: summary.lastError ?? "", budgetLeft: lane.policy.budgetLeft(sent: next.sent, now: now), held: held)
            }
        } catch {
            storeFailed(error, "read the outbox")
            return []
        }
    }

    private func send(_ lane: Lane) {
        guard !lane.busy, let store = store() else { return }
        let now = loop.wallClock
        let items: [OutboxItem]
        do {
            let next = try next(for: lane, in: store, at: now)
            switch next.decision {
            case .idle: return
            case .wait(let until, _):
                // Held: woken when they may go (the quiet's end, a free slot, a repeat's ten minutes).
                let hold = lane.hold ?? loop.makeTimer { [weak self, weak lane] in
                    guard let self, let lane else { return }
                    self.send(lane)
                }
                lane.hold = hold
                hold.arm(after: .milliseconds(Int64(min(max(until - now, 0), 86_400 * 2) * 1000) + 50))
                return
            case .send(let ids):
                let chosen = next.waiting.filter { ids.contains($0.alertID) }
                // A digest carries what the service shows whole; the rest go in the next message.
                let fitting = ForwardDigest.fitting(chosen.map { forwarded($0, now: now) }, in: lane.target.service.messageRoom, time: WallClock.localTime,
                                                  localize: Localization.localizer)
                items = Array(chosen.prefix(fitting))
            }
            for item in items { try store.beginAttempt(item) }
        } catch {
            return storeFailed(error, "read the outbox")
        }
        let alerts = items.map { forwarded($0, now: now) }
        guard let first = alerts.first else { return }
        let alert = alerts.count == 1 ? first : ForwardDigest.alert(alerts, time: WallClock.localTime, localize: Localization.localizer)
        let request = lane.target.request(
            for: alert, raisedAt: WallClock.localMinute(alert.postedAt), localize: Localization.localizer, now: now, signer: MessageSignature.hmacSHA256)
        lane.busy = true
        lane.transport.post(request) { [weak self, weak lane] answer in
            guard let self, let lane else { return }
            lane.busy = false
            self.answered(lane, items, answer)
            self.onQueuesChanged?()
        }
    }

    /// An outbox item as the message carries it; late when an attempt failed before, or it waited long.
    private func forwarded(_ item: OutboxItem, now: Double) -> ForwardedAlert {
        ForwardedAlert(
            kind: item.kind, title: item.title, body: item.body, urgency: item.urgency, postedAt: item.postedAt, key: item.key,
            host: host, late: item.attempts > 0 || now - item.queuedAt > ForwardedAlert.lateAfter)
    }

    /// What waits for `lane`'s target, what it took lately, and what its policy says of them now.
    private func next(for lane: Lane, in store: AlertStore, at now: Double) throws(StoreError)
        -> (waiting: [OutboxItem], sent: [SentMessage], decision: ForwardingDecision)
    {
        let waiting = try store.waitingForDelivery(to: lane.target.name, limit: 200)
        let window = max(lane.policy.budget?.window ?? 0, ForwardingPolicy.repeatWindow)
        let sent = try store.sentMessages(to: lane.target.name, since: now - window)
        let decision = lane.policy.decide(
            waiting: waiting.map { WaitingAlert(id: $0.alertID, title: $0.title, urgency: $0.urgency, postedAt: $0.postedAt) },
            sent: sent, now: now, utcOffset: WallClock.utcOffset(now))
        return (waiting, sent, decision)
    }

    /// What the target said of the message carrying `items` (one alert, or a digest of several).
    private func answered(_ lane: Lane, _ items: [OutboxItem], _ answer: ForwardAnswer) {
        guard let store = store() else { return }
        switch answer.verdict {
        case .delivered:
            do {
                // One instant for all: they went in one message (the budget counts it once).
                let at = loop.wallClock
                for item in items { try store.markDelivered(item, answer: answer.text, at: at) }
            } catch {
                return storeFailed(error, "mark a forwarded alert delivered")
            }
            lane.failures = 0
            if lane.reported != nil { log("forwarding to \(lane.target.displayName) works again") }
            lane.reported = nil
            if refusing.remove(lane.target.name) != nil && refusing.isEmpty { onRefusal?(nil) }
            send(lane)
        case .messageRefused(let problem):
            // This message cannot go (too long, a form the service cannot take): the rest of the queue can.
            do {
                for item in items { try store.markRefused(item, problem: problem, at: loop.wallClock) }
            } catch {
                return storeFailed(error, "note a refused forward")
            }
            log("\(lane.target.displayName) refused an alert (\(problem)); it is not sent there again, the next one goes")
            if refusing.insert(lane.target.name).inserted {
                onRefusal?(.forwardRefused(target: lane.target.displayName, answer: problem))
            }
            send(lane)
        case .retry(let problem), .targetRefused(let problem):
            do {
                for item in items { try store.markFailed(item, problem: problem) }
            } catch {
                storeFailed(error, "note a failed forward")
            }
            lane.failures = min(lane.failures + 1, 1000)
            let delay = ForwardBackoff.delay(afterFailures: lane.failures)
            if lane.reported == nil {
                log("cannot forward alerts to \(lane.target.displayName): \(problem); they wait in the outbox, retrying in \(delay.components.seconds) s")
            }
            lane.reported = problem
            let retry = lane.retry ?? loop.makeTimer { [weak self, weak lane] in
                guard let self, let lane else { return }
                lane.backingOff = false
                self.send(lane)
            }
            lane.retry = retry
            lane.backingOff = true
            retry.arm(after: delay)
            // A wrong URL, key or token: the user must act.
            if case .targetRefused = answer.verdict, refusing.insert(lane.target.name).inserted {
                onRefusal?(.forwardRefused(target: lane.target.displayName, answer: problem))
            }
        }
    }

    /// Drops what waits for targets no longer in `[relay]` (the outbox of
    /// the previous configuration), saying how many alerts each had waiting.
    static func dropQueuesOfRemovedTargets(_ targets: [ForwardTarget], store: AlertStore, log: (String) -> Void) throws(StoreError) {
        for orphan in try store.dropOutbox(except: targets.map(\.name)) where orphan.waiting > 0 {
            log("\(orphan.waiting) alert(s) waited for \(orphan.target), which is no longer in [relay]; they are dropped")
        }
    }
}
