import AlertJournal
import DBus
import DesktopServices
import EventLoop
import CCRelayCore
import CoreVocabulary

/// Keeps the daemon's `AlertStore` usable through a full, read-only or
/// failing disk: the daemon runs on without persistence, says so once per
/// episode, and opens the file again at most once a minute when it next
/// needs it (no timer of its own: no extra wake-ups). Only a damaged or
/// foreign file is ever moved aside (by `AlertStore` itself).
/// Confinement: used only on the daemon's loop.
final class JournalKeeper {
    private let path: String
    private let log: (String) -> Void
    private let now: () -> Instant
    /// The wall clock (the loop's): when alerts were raised.
    private let wallClock: () -> Double
    private(set) var store: AlertStore?
    private var lastAttempt: Instant?
    /// The problem already reported for this episode.
    private var reported: String?
    static let retryAfter: Duration = .seconds(60)
    /// Alerts that could not be journaled yet, with their time, oldest first.
    private var unjournaled: [(alert: Alert, notice: String?, at: Double)] = []
    /// The most kept in memory; beyond it the oldest go (said in the log).
    static let unjournaledLimit = 200
    private var unjournaledDropped = 0

    /// The control API's answer while the journal cannot be used: what is
    /// wrong with it, never "no alerts".
    var unusable: DBusError {
        DBusError(.failed, "the alert journal cannot be used now: \(reported ?? path); alerts are still shown, and kept until it can be written")
    }

    /// The newest alerts, for the control API; what is wrong with the journal when it cannot be read.
    func alerts(limit: Int) throws(DBusError) -> [JournalEntry] {
        guard let store = usable() else { throw unusable }
        do {
            return try store.alerts(limit: limit)
        } catch {
            failed(error, doing: "read the journal")
            throw unusable
        }
    }

    /// The timeline from `since`, for the control API; what is wrong with the journal when it cannot be read.
    func timeline(since: Double) throws(DBusError) -> [TimelineEntry] {
        guard let store = usable() else { throw unusable }
        do {
            return try store.timeline(since: since)
        } catch {
            failed(error, doing: "read the timeline")
            throw unusable
        }
    }

    /// Acknowledges every unread alert (Clear badge); how many, or what is wrong with the journal.
    func acknowledgeAll() throws(DBusError) -> Int {
        guard let store = usable() else { throw unusable }
        do {
            return try store.acknowledgeAll()
        } catch {
            failed(error, doing: "clear the badge")
            throw unusable
        }
    }

    /// Runs an acknowledgement on the store: how many alerts it marked read,
    /// and the kinds left with nothing unread, whose bubbles are to close (one
    /// still on screen, or one waiting for a notification server, which would
    /// pop up, red, long after the user saw it in the tray). A failure is said once; nil then.
    func acknowledging(_ what: String, _ change: (AlertStore) throws(StoreError) -> Int) -> (count: Int, nothingUnread: [AlertKind])? {
        guard let store = usable() else { return nil }
        do {
            let count = try change(store)
            let unread = try store.unreadKinds()
            return (count, Self.badgeKinds.filter { !unread.contains($0) })
        } catch {
            failed(error, doing: "acknowledge " + what)
            return nil
        }
    }

    /// Every kind that can be unread: what Clear badge closes.
    static let badgeKinds = AlertKind.allCases.filter { $0.badgeIncrement > 0 }

    /// Whether alerts wait in memory for the store.
    var hasUnjournaled: Bool { !unjournaled.isEmpty }

    init(path: String, log: @escaping (String) -> Void, now: @escaping () -> Instant, wallClock: @escaping () -> Double) {
        self.path = path
        self.log = log
        self.now = now
        self.wallClock = wallClock
        _ = usable()
    }

    /// The store, opening it again if it could not be used and a minute has passed.
    func usable() -> AlertStore? {
        if let store { return store }
        let time = now()
        if let lastAttempt, time - lastAttempt < Self.retryAfter { return nil }
        lastAttempt = time
        do {
            // Short waits for the CLI's writes: the keep-alive loop must not stall on the file.
            let opened = try AlertStore(path: path, busyTimeout: 500, log: log)
            opened.onForwardsDropped = { [log] count in
                log("the outbox is full (\(AlertStore.outboxLimitDefault) alerts wait for a target): the \(count) oldest were dropped "
                    + "(a target has been unreachable, or has held alerts for its quiet hours or budget, for long; ccrelay status shows which)")
            }
            store = opened
            if reported != nil { log("\(path) can be used again") }
            reported = nil
            return opened
        } catch {
            report("\(error)")
            return nil
        }
    }

    /// Journals `alerts` (queued for the targets `forwardTo` names, in the
    /// same transaction), after any that waited in memory; true when
    /// everything is in the store now. When the store cannot be written, the
    /// alerts wait in memory (at most `unjournaledLimit`), to be journaled
    /// and forwarded with the next call that can.
    func record(_ alerts: [(Alert, notice: String?)], forwardTo: (Alert) -> [String]) -> Bool {
        let time = wallClock()
        unjournaled += alerts.map { ($0.0, $0.notice, time) }
        guard !unjournaled.isEmpty else { return false }
        guard let store = usable() else {
            keepWithinTheLimit()
            return false
        }
        // One transaction per moment they were raised, oldest first.
        while let first = unjournaled.first {
            let batch = unjournaled.prefix { $0.at == first.at }
            do {
                try store.record(batch.map { ($0.alert, $0.notice) }, at: first.at, forwardTo: forwardTo)
            } catch {
                failed(error, doing: "record \(unjournaled.count) alert(s)")
                keepWithinTheLimit()
                return false
            }
            unjournaled.removeFirst(batch.count)
        }
        if unjournaledDropped > 0 {
            log("\(unjournaledDropped) alert(s) raised while \(path) could not be written were more than ccrelay keeps in memory; the oldest are not in the journal")
            unjournaledDropped = 0
        }
        succeeded()
        return true
    }

    /// What waits in memory for a store that cannot be written is at most
    /// `unjournaledLimit`, the oldest going first (only then: a store that
    /// can be written takes every alert of a reply, however many).
    private func keepWithinTheLimit() {
        guard unjournaled.count > Self.unjournaledLimit else { return }
        unjournaledDropped += unjournaled.count - Self.unjournaledLimit
        unjournaled.removeFirst(unjournaled.count - Self.unjournaledLimit)
    }

    /// A read or write failed: said once per episode; the file is kept.
    func failed(_ error: StoreError, doing what: String) {
        report("cannot \(what) in \(path): \(error)")
    }

    /// A write worked: the episode (if any) is over.
    func succeeded() {
        guard reported != nil, store != nil else { return }
        reported = nil
        log("\(path) can be written again")
    }

    private func report(_ problem: String) {
        guard reported == nil else { return }
        reported = problem
        log(problem + "; ccrelay goes on without its journal (alerts are still shown, kept in memory and journaled and forwarded once it can write again) and tries again later")
    }
}
