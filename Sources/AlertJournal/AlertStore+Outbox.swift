import CCRelayCore
import CoreVocabulary
import Forwarding

/// How a relay target is doing, for `ccrelay status`.
public struct OutboxSummary: Sendable, Hashable {
    public var target: String
    /// Alerts waiting for it.
    public var queued: Int
    public var lastDeliveredAt: Double?
    /// Why the newest failed attempt failed, when the last attempt failed.
    public var lastError: String?
}

/// The outbox: alerts to forward, queued in the transaction that journals
/// them (`record(_:forwardTo:)`), delivered oldest first, each at most once
/// per target (an alert is marked delivered in the transaction that follows
/// the target's answer; the key lets a target drop the repeat a `kill -9`
/// between its answer and that write would cause).
extension AlertStore {
    func enqueue(alert id: Int64, for targets: [String], at time: Double) throws(StoreError) {
        guard !targets.isEmpty else { return }
        let key = Self.newKey()
        for target in targets {
            try database.run(
                "INSERT OR IGNORE INTO outbox (alert_id, target, key, queued_at) VALUES (?, ?, ?, ?)",
                [.integer(id), .text(target), .text(key), .real(time)])
        }
    }

    /// 128 random bits (getrandom) in hex: unique per alert, across machines.
    public static func newKey() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let hex = String(generator.next(), radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }

    /// The outbox keeps the newest 1,000 rows of what was delivered (or
    /// refused), and at most `outboxLimit` alerts waiting for each target —
    /// held by its quiet hours or budget, or for a target that is down; past
    /// that the oldest waiting go (said through `onForwardsDropped`). Rows of
    /// pruned alerts go too.
    func pruneOutbox() throws(StoreError) {
        try database.run("DELETE FROM outbox WHERE alert_id NOT IN (SELECT id FROM alerts)")
        try database.run(
            """
            DELETE FROM outbox WHERE rowid IN (SELECT rowid FROM outbox WHERE delivered_at IS NOT NULL OR refused_at IS NOT NULL
                ORDER BY alert_id DESC LIMIT -1 OFFSET \(Self.deliveredKept))
            """)
        var full: [String] = []
        try database.run(
            "SELECT target FROM outbox WHERE delivered_at IS NULL AND refused_at IS NULL GROUP BY target HAVING count(*) > ?",
            [.integer(Int64(outboxLimit))]
        ) { row in full.append(row.text(0, limit: 300)) }
        var dropped = 0
        for target in full {
            try database.run(
                """
                DELETE FROM outbox WHERE rowid IN (SELECT rowid FROM outbox WHERE target = ?1 AND delivered_at IS NULL AND refused_at IS NULL
                    ORDER BY alert_id DESC LIMIT -1 OFFSET ?2)
                """, [.text(target), .integer(Int64(outboxLimit))])
            dropped += database.changes
        }
        if dropped > 0 { onForwardsDropped?(dropped) }
    }

    /// Delivered and refused rows kept (for the status and the history's counts).
    static let deliveredKept = 1000

    /// Drops what waits for targets no longer configured (not in `targets`);
    /// returns how many alerts each had waiting, so that it can be said.
    public func dropOutbox(except targets: [String]) throws(StoreError) -> [(target: String, waiting: Int)] {
        try database.transaction { () throws(StoreError) -> [(target: String, waiting: Int)] in
            var orphans: [(target: String, waiting: Int)] = []
            try database.run(
                "SELECT target, sum(delivered_at IS NULL AND refused_at IS NULL) FROM outbox GROUP BY target ORDER BY target"
            ) { row in
                let target = row.text(0, limit: 300)
                if !targets.contains(target) { orphans.append((target, Int(clamping: row.integer(1)))) }
            }
            for orphan in orphans { try database.run("DELETE FROM outbox WHERE target = ?", [.text(orphan.target)]) }
            return orphans
        }
    }

    /// The alerts waiting for `target`, oldest first, at most `limit`.
    public func waitingForDelivery(to target: String, limit: Int) throws(StoreError) -> [OutboxItem] {
        var items: [OutboxItem] = []
        try database.run(
            """
            SELECT o.alert_id, o.key, o.attempts, o.queued_at, a.kind, a.title, a.body, a.urgency, a.posted_at
            FROM outbox o JOIN alerts a ON a.id = o.alert_id
            WHERE o.target = ? AND o.delivered_at IS NULL AND o.refused_at IS NULL ORDER BY o.alert_id LIMIT ?
            """, [.text(target), .integer(Int64(max(1, min(limit, 1000))))]
        ) { row in
            // Read back like network input: bounded, unknown kinds as notices.
            items.append(OutboxItem(
                alertID: row.integer(0), target: target, key: row.text(1, limit: 64), attempts: Int(clamping: max(0, row.integer(2))),
                queuedAt: Self.time(row.real(3)) ?? 0, kind: AlertKind(rawValue: row.text(4)) ?? .notice,
                title: row.text(5, limit: Self.textLimit), body: row.text(6, limit: Self.textLimit),
                urgency: Urgency(rawValue: UInt8(clamping: row.integer(7))) ?? .normal, postedAt: Self.time(row.real(8)) ?? 0))
        }
        return items
    }

    /// The messages `target` took since `since`, oldest first: the alerts
    /// marked delivered at one instant went in one message (a digest marks them all so).
    public func sentMessages(to target: String, since: Double) throws(StoreError) -> [SentMessage] {
        var messages: [SentMessage] = []
        try database.run(
            """
            SELECT o.delivered_at, a.title FROM outbox o JOIN alerts a ON a.id = o.alert_id
            WHERE o.target = ? AND o.delivered_at > ? ORDER BY o.delivered_at, o.alert_id LIMIT 5000
            """, [.text(target), .real(since)]
        ) { row in
            let at = Self.time(row.real(0)) ?? 0
            let title = row.text(1, limit: Self.textLimit)
            if messages.last?.at == at { messages[messages.count - 1].titles.append(title) } else { messages.append(SentMessage(at: at, titles: [title])) }
        }
        return messages
    }

    /// Counts an attempt as begun, before the request goes out: one cut
    /// short by a crash still makes the next attempt "late".
    public func beginAttempt(_ item: OutboxItem) throws(StoreError) {
        try database.run(
            "UPDATE outbox SET attempts = min(attempts + 1, 1000000) WHERE alert_id = ? AND target = ?",
            [.integer(item.alertID), .text(item.target)])
    }

    /// The target took it; `answer` is what it said (bounded).
    public func markDelivered(_ item: OutboxItem, answer: String, at time: Double = AlertStore.now) throws(StoreError) {
        try database.run(
            "UPDATE outbox SET delivered_at = ?, last_error = NULL, answer = ? WHERE alert_id = ? AND target = ?",
            [.real(time), .text(String(answer.prefix(500))), .integer(item.alertID), .text(item.target)])
    }

    /// The attempt failed with `problem`; the alert waits for the next one.
    public func markFailed(_ item: OutboxItem, problem: String) throws(StoreError) {
        try database.run(
            "UPDATE outbox SET last_error = ? WHERE alert_id = ? AND target = ?",
            [.text(String(problem.prefix(500))), .integer(item.alertID), .text(item.target)])
    }

    /// The target refused this alert for good (its content: 413, 422): it is
    /// not sent again, and the next one goes.
    public func markRefused(_ item: OutboxItem, problem: String, at time: Double = AlertStore.now) throws(StoreError) {
        try database.run(
            "UPDATE outbox SET refused_at = ?, last_error = ? WHERE alert_id = ? AND target = ?",
            [.real(time), .text(String(problem.prefix(500))), .integer(item.alertID), .text(item.target)])
    }

    /// Queue length, last delivery and the last failure of each of `targets`.
    public func outboxSummary(for targets: [String]) throws(StoreError) -> [OutboxSummary] {
        var summaries: [OutboxSummary] = []
        for target in targets {
            var summary = OutboxSummary(target: target, queued: 0, lastDeliveredAt: nil, lastError: nil)
            try database.run(
                """
                SELECT (SELECT count(*) FROM outbox WHERE target = ?1 AND delivered_at IS NULL AND refused_at IS NULL),
                    (SELECT max(delivered_at) FROM outbox WHERE target = ?1),
                    (SELECT last_error FROM outbox WHERE target = ?1 AND delivered_at IS NULL AND refused_at IS NULL
                        AND last_error IS NOT NULL ORDER BY alert_id LIMIT 1)
                """, [.text(target)]
            ) { row in
                summary.queued = Int(clamping: row.integer(0))
                summary.lastDeliveredAt = row.isNull(1) ? nil : Self.time(row.real(1))
                summary.lastError = row.isNull(2) ? nil : row.text(2, limit: 500)
            }
            summaries.append(summary)
        }
        return summaries
    }
}
