import AlertJournal
import CCRelayCore
import CoreVocabulary
import DesktopServices
import EventLoop
import Forwarding
import ForwardingTransport

/// Carries out the forwarding lanes' effects (`ForwarderEffect`, decided by
/// the core's `Forwarder`): reads each target's outbox in the journal, posts
/// through the target's own `ForwardTransport` on the daemon's loop, marks
/// what came of it, and keeps one timer per lane. What it hears back (the
/// outbox read, an answer, a timer) it reports through `report`, which the
/// daemon hands to the core. It decides nothing.
///
/// Confinement: used only on the daemon's loop.
final class AlertForwarder {
    /// Each target and its transport, by outbox name.
    private let lanes: [String: (ForwardTarget, any ForwardTransport)]
    private var timers: [String: any LoopTimer] = [:]
    private let loop: any EventScheduler
    private let store: () -> AlertStore?
    private let storeFailed: (StoreError, String) -> Void
    /// What the lanes heard (on the loop, never from inside `carryOut`'s caller's list: the daemon queues it).
    var report: ((ForwarderEvent) -> Void)?

    init(targets: [ForwardTarget], loop: any EventScheduler,
         store: @escaping () -> AlertStore?, storeFailed: @escaping (StoreError, String) -> Void,
         transport: (ForwardTarget) -> any ForwardTransport) {
        lanes = Dictionary(targets.map { ($0.name, ($0, transport($0))) }, uniquingKeysWith: { first, _ in first })
        self.loop = loop
        self.store = store
        self.storeFailed = storeFailed
    }

    /// Each target's queue, last delivery, budget left and why alerts are held, for `GetStatus`.
    func summaries(_ forwarder: Forwarder) -> [ForwardingSummary] {
        let targets = forwarder.targets
        guard !targets.isEmpty, let store = store() else { return [] }
        let now = loop.wallClock
        do {
            let summaries = try store.outboxSummary(for: targets.map(\.name))
            return try zip(targets, summaries).map { target, summary throws(StoreError) in
                let (waiting, sent) = try read(target.name, forwarder.sentWindow(target.name), store, now)
                let hold = forwarder.hold(of: target.name, waiting: waiting, sent: sent, now: now, utcOffset: WallClock.utcOffset(now))
                return ForwardingSummary(
                    target: target.displayName, queued: summary.queued, lastDelivered: summary.lastDeliveredAt,
                    lastError: summary.lastError ?? "", budgetLeft: hold.budgetLeft, held: hold.held)
            }
        } catch {
            storeFailed(error, "read the outbox")
            return []
        }
    }

    private func read(_ target: String, _ window: Double, _ store: AlertStore, _ now: Double) throws(StoreError)
        -> (waiting: [OutboxItem], sent: [SentMessage])
    {
        (try store.waitingForDelivery(to: target, limit: Forwarder.readLimit), try store.sentMessages(to: target, since: now - window))
    }

    /// Carries out one of the lanes' effects; `window`: how far back the messages a target took are read.
    func carryOut(_ effect: ForwarderEffect, window: (String) -> Double) {
        switch effect {
        case .readOutbox(let target):
            guard let store = store() else { return report?(.outboxRead(target: target, waiting: [], sent: [], now: 0, utcOffset: 0)) ?? () }
            let now = loop.wallClock
            do {
                let (waiting, sent) = try read(target, window(target), store, now)
                report?(.outboxRead(target: target, waiting: waiting, sent: sent, now: now, utcOffset: WallClock.utcOffset(now)))
            } catch {
                storeFailed(error, "read the outbox")
                report?(.outboxRead(target: target, waiting: [], sent: [], now: now, utcOffset: 0))
            }
        case .post(let target, let items, let message): post(target, items, message)
        case .armLaneTimer(let target, let delay): timer(target).arm(after: delay)
        case .disarmLaneTimer(let target): timers[target]?.disarm()
        case .markDelivered(let items, let answer):
            // One instant for all: they went in one message (the budget counts it once).
            let at = loop.wallClock
            mark(items, "mark a forwarded alert delivered") { store, item throws(StoreError) in try store.markDelivered(item, answer: answer, at: at) }
        case .markFailed(let items, let problem):
            mark(items, "note a failed forward") { store, item throws(StoreError) in try store.markFailed(item, problem: problem) }
        case .markRefused(let items, let problem):
            let at = loop.wallClock
            mark(items, "note a refused forward") { store, item throws(StoreError) in try store.markRefused(item, problem: problem, at: at) }
        case .log, .raiseRefusal, .closeRefusal, .queuesChanged: break
        }
    }

    private func mark(_ items: [OutboxItem], _ doing: String, _ change: (AlertStore, OutboxItem) throws(StoreError) -> Void) {
        guard let store = store() else { return }
        do {
            for item in items { try change(store, item) }
        } catch {
            storeFailed(error, doing)
        }
    }

    private func post(_ name: String, _ items: [OutboxItem], _ message: ForwardedAlert) {
        guard let (target, transport) = lanes[name] else { return }
        // Not sent without the attempt written: the lane backs off as after any failure, the alerts wait.
        let notSent = ForwardAnswer(status: 0, text: "", verdict: .retry("the journal cannot be written"))
        guard let store = store() else { return report?(.answered(target: name, items: items, answer: notSent)) ?? () }
        do {
            for item in items { try store.beginAttempt(item) }
        } catch {
            storeFailed(error, "begin a forward")
            return report?(.answered(target: name, items: items, answer: notSent)) ?? ()
        }
        let request = target.request(
            for: message, raisedAt: WallClock.localMinute(message.postedAt), localize: Localization.localizer, now: loop.wallClock,
            signer: MessageSignature.hmacSHA256)
        transport.post(request) { [weak self] answer in self?.report?(.answered(target: name, items: items, answer: answer)) }
    }

    private func timer(_ target: String) -> any LoopTimer {
        if let made = timers[target] { return made }
        let made = loop.makeTimer { [weak self] in self?.report?(.laneTimerFired(target: target)) }
        timers[target] = made
        return made
    }

    /// Drops what waits for targets no longer in `[relay]` (the outbox of
    /// the previous configuration), saying how many alerts each had waiting.
    static func dropQueuesOfRemovedTargets(_ targets: [ForwardTarget], store: AlertStore, log: (String) -> Void) throws(StoreError) {
        for orphan in try store.dropOutbox(except: targets.map(\.name)) where orphan.waiting > 0 {
            log("\(orphan.waiting) alert(s) waited for \(orphan.target), which is no longer in [relay]; they are dropped")
        }
    }
}
