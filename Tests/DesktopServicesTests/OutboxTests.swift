import AlertJournal
import Foundation
import DesktopServices
import CCRelayCore
import CoreVocabulary
import Testing
import Forwarding

/// alerts.db's outbox: queued with the journal entry, delivered oldest first
/// and once, one key per alert kept across reopening, bounded.
@Suite struct OutboxTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-outbox-\(UUID().uuidString)").path
    var path: String { directory + "/alerts.db" }

    func store(outboxLimit: Int = 1000) throws -> AlertStore {
        try AlertStore(path: path, outboxLimit: outboxLimit) { Issue.record("unexpected: \($0)") }
    }

    func alert(_ title: String, _ kind: AlertKind = .loggedOut) -> Alert {
        Alert(kind: kind, title: title, body: "body of \(title)", urgency: .critical)
    }

    @Test func anAlertIsQueuedForItsTargetsInTheTransactionThatJournalsIt() throws {
        let store = try store()
        try store.record([(alert("a"), nil), (alert("b", .notice), "n-1")], forwardTo: { $0.kind == .loggedOut ? ["ntfy x", "gotify y"] : [] })
        let first = try #require(try store.waitingForDelivery(to: "ntfy x", limit: 1).first)
        #expect(first.title == "a" && first.body == "body of a" && first.kind == .loggedOut && first.urgency == .critical)
        #expect(first.attempts == 0)
        #expect(try store.waitingForDelivery(to: "gotify y", limit: 1).first?.key == first.key, "one key per alert, the same for every target")
        #expect(first.key.count == 32 && first.key.allSatisfy(\.isHexDigit))
        #expect(try store.outboxSummary(for: ["ntfy x", "gotify y", "webhook z"]).map(\.queued) == [1, 1, 0])
        let journal = try store.alerts(limit: 10)
        #expect(journal.map(\.forwardWaiting) == [0, 2])
    }

    /// issue 26: a digest marks its alerts delivered at one instant: one message for
    /// the budget, and the history says which alerts went in one.
    @Test func aDigestIsOneMessageAndTheHistorySaysSo() throws {
        let store = try store()
        for title in ["1", "2", "3"] { try store.record(alert(title), forwardTo: { _ in ["t", "u"] }) }
        let waiting = try store.waitingForDelivery(to: "t", limit: 10)
        #expect(waiting.map(\.title) == ["1", "2", "3"])
        try store.markDelivered(waiting[0], answer: "", at: 1000)
        for item in waiting.dropFirst() { try store.markDelivered(item, answer: "", at: 2000) }
        try store.markDelivered(try #require(try store.waitingForDelivery(to: "u", limit: 1).first), answer: "", at: 2000)
        #expect(try store.sentMessages(to: "t", since: 0) == [SentMessage(at: 1000, titles: ["1"]), SentMessage(at: 2000, titles: ["2", "3"])])
        #expect(try store.sentMessages(to: "t", since: 1500).count == 1)
        let history = try store.alerts(limit: 10)
        #expect(history.map(\.forwardedInDigest) == [1, 1, 0], "\(history.map(\.title)): 3 and 2 went together to t; 1 alone to u")
        #expect(history.map(\.forwarded) == [1, 1, 2])
    }

    @Test func theJournalEntryAndItsOutboxRowsLandTogetherOrNotAtAll() throws {
        let store = try store()
        try store.record(alert("kept"), forwardTo: { _ in ["t"] })
        // The outbox insert fails in the middle of the transaction (as a full disk would make it).
        try sqlite(path, "CREATE TRIGGER refuse BEFORE INSERT ON outbox BEGIN SELECT RAISE(ABORT, 'disk full'); END;")
        #expect(throws: StoreError.self) { try store.record(self.alert("lost"), forwardTo: { _ in ["t"] }) }
        #expect(try store.alerts(limit: 10).map(\.title) == ["kept"], "no alert journaled without its outbox rows")
        try store.record(alert("not forwarded"))
        #expect(try store.alerts(limit: 10).map(\.title) == ["not forwarded", "kept"])
    }

    @Test func deliveryIsOldestFirstAndOnceAndSurvivesReopening() throws {
        var key = ""
        do {
            let store = try store()
            for title in ["1", "2", "3"] { try store.record(alert(title), forwardTo: { _ in ["t"] }) }
            let first = try #require(try store.waitingForDelivery(to: "t", limit: 1).first)
            key = first.key
            try store.beginAttempt(first)
            // Killed here, in the middle of the delivery.
        }
        let store = try store()
        let again = try #require(try store.waitingForDelivery(to: "t", limit: 1).first)
        #expect(again.title == "1" && again.key == key, "the same alert, with the same key, after a restart")
        #expect(again.attempts == 1, "an attempt cut short counts: the message is marked late")
        try store.markDelivered(again, answer: "{\"id\":\"m1\"}")
        #expect(try store.waitingForDelivery(to: "t", limit: 1).first?.title == "2")
        try store.markFailed(try #require(try store.waitingForDelivery(to: "t", limit: 1).first), problem: "HTTP 503")
        let summary = try #require(try store.outboxSummary(for: ["t"]).first)
        #expect(summary.queued == 2 && summary.lastError == "HTTP 503" && summary.lastDeliveredAt != nil)
        #expect(try store.alerts(limit: 3).map(\.forwarded) == [0, 0, 1])
    }

    /// Issue 31.9: the cap counts what waits for each target (held or not
    /// delivered); delivered rows do not crowd them out, another target's none.
    @Test func theOutboxKeepsItsLimitWaitingForEachTarget() throws {
        let store = try store(outboxLimit: 3)
        for title in ["1", "2"] { try store.record(alert(title), forwardTo: { _ in ["t", "u"] }) }
        try store.markDelivered(try #require(try store.waitingForDelivery(to: "t", limit: 1).first), answer: "")
        for title in ["3", "4"] { try store.record(alert(title), forwardTo: { _ in ["t", "u"] }) }
        #expect(try store.waitingForDelivery(to: "t", limit: 1).first?.title == "2")
        #expect(try store.outboxSummary(for: ["t", "u"]).map(\.queued) == [3, 3], "u's four fit no more than three")
        #expect(try store.waitingForDelivery(to: "u", limit: 1).first?.title == "2", "the oldest of u's went")
        try store.record(alert("5"), forwardTo: { _ in ["t"] })
        #expect(try store.waitingForDelivery(to: "t", limit: 1).first?.title == "3", "then the oldest waiting")
        #expect(try store.outboxSummary(for: ["t"]).first?.queued == 3)
        #expect(try store.alerts(limit: 5).last?.forwarded == 1, "the delivery of 1 is still counted")
    }

    @Test func tenThousandAlertsWaitByDefault() {
        #expect(AlertStore.outboxLimitDefault == 10_000)
    }

    @Test func aVersionTwoJournalGainsTheOutbox() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try sqlite(path, """
            PRAGMA application_id = 1667461753;
            CREATE TABLE notices_seen (id TEXT PRIMARY KEY, shown_at REAL NOT NULL);
            CREATE TABLE alerts (id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, title TEXT NOT NULL,
              body TEXT NOT NULL, urgency INTEGER NOT NULL, posted_at REAL NOT NULL, notification_id INTEGER,
              acknowledged INTEGER NOT NULL DEFAULT 0, acknowledged_at REAL);
            CREATE INDEX alerts_unread ON alerts (acknowledged, kind);
            CREATE TABLE session (singleton INTEGER PRIMARY KEY CHECK (singleton = 1), server TEXT NOT NULL,
              account TEXT NOT NULL, token TEXT NOT NULL, ip TEXT NOT NULL, interval INTEGER NOT NULL,
              timeout INTEGER NOT NULL, seq INTEGER NOT NULL, deadline REAL NOT NULL);
            INSERT INTO alerts (kind, title, body, urgency, posted_at) VALUES ('logged-out', 'old', 'b', 2, 1);
            PRAGMA user_version = 2;
            """)
        let store = try store()
        #expect(try store.alerts(limit: 10).map(\.title) == ["old"], "the journal is kept")
        try store.record(alert("new"), forwardTo: { _ in ["t"] })
        #expect(try store.waitingForDelivery(to: "t", limit: 1).first?.title == "new", "old alerts are not forwarded after an upgrade")
    }

    /// issue 20: the outbox was keyed by the whole URL, so fixing a token
    /// orphaned the queue. A schema-3 file's rows are renamed to the target's
    /// stable name (no secret in it) and go out to the fixed target.
    @Test func aVersionThreeOutboxIsKeyedByTheTargetsStableName() throws {
        let old = "gotify https://gotify.campus.example/message?token=WrongToken"
        do {
            let store = try store()
            try store.record(alert("waiting"), forwardTo: { _ in [old] })
        }
        try sqlite(path, "PRAGMA user_version = 3;")
        let store = try store()
        let fixed = try ForwardTarget(key: "gotify", url: "https://gotify.campus.example/message?token=RightToken")
        #expect(fixed.name == "gotify https://gotify.campus.example/message")
        #expect(try store.waitingForDelivery(to: fixed.name, limit: 1).first?.title == "waiting", "the queue carries over to the fixed target")
        #expect(try store.waitingForDelivery(to: old, limit: 1).first == nil)
    }

    /// A target removed from [relay]: what waited for it is dropped, and counted so it can be said.
    @Test func queuesOfTargetsNoLongerConfiguredAreDroppedAndCounted() throws {
        let store = try store()
        try store.record(alert("1"), forwardTo: { _ in ["kept", "gone"] })
        try store.record(alert("2"), forwardTo: { _ in ["kept", "gone"] })
        try store.markDelivered(try #require(try store.waitingForDelivery(to: "gone", limit: 1).first), answer: "")
        let dropped = try store.dropOutbox(except: ["kept"])
        #expect(dropped.map(\.target) == ["gone"] && dropped.first?.waiting == 1)
        #expect(try store.outboxSummary(for: ["kept"]).first?.queued == 2)
        #expect(try store.alerts(limit: 5).allSatisfy { $0.forwardWaiting == 1 && $0.forwarded == 0 })
    }

    /// issue 20: one alert a target refused for good (413) held up every later one.
    @Test func anAlertRefusedForGoodNoLongerWaitsAndTheNextIsDue() throws {
        let store = try store()
        for title in ["big", "next"] { try store.record(alert(title), forwardTo: { _ in ["t"] }) }
        try store.markRefused(try #require(try store.waitingForDelivery(to: "t", limit: 1).first), problem: "HTTP 413")
        #expect(try store.waitingForDelivery(to: "t", limit: 1).first?.title == "next")
        #expect(try store.outboxSummary(for: ["t"]).first?.queued == 1)
        #expect(try store.alerts(limit: 5).map(\.forwardWaiting) == [1, 0])
    }

    /// issue 20: the cap dropped the oldest waiting alerts without a word.
    @Test func theCapSaysHowManyWaitingAlertsItDropped() throws {
        let store = try self.store(outboxLimit: 2)
        final class Counts { var dropped: [Int] = [] }
        let counts = Counts()
        store.onForwardsDropped = { counts.dropped.append($0) }
        for title in ["1", "2", "3", "4"] { try store.record(alert(title), forwardTo: { _ in ["t"] }) }
        #expect(counts.dropped == [1, 1])
    }

    /// Runs SQL on the file with Python's sqlite3 (another program, as a damaged or older file would be).
    func sqlite(_ file: String, _ script: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        python.arguments = ["-c", "import sqlite3, sys; sqlite3.connect(sys.argv[1]).executescript(sys.argv[2])", file, script]
        try python.run()
        python.waitUntilExit()
        #expect(python.terminationStatus == 0)
    }
}
