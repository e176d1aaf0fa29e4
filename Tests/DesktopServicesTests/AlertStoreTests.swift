import AlertJournal
import Foundation
import DesktopServices
import CCRelayCore
import CoreVocabulary
import TestSupport
import Testing

/// alerts.db: permissions, migrations, the journal and badge, pruning, the
/// saved session, concurrent use, recovery from a broken file.
@Suite struct AlertStoreTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-store-\(UUID().uuidString)").path

    func alert(_ kind: AlertKind, _ title: String = "t", urgency: Urgency = .normal) -> Alert {
        Alert(kind: kind, title: title, body: "body of \(title)", urgency: urgency)
    }

    /// Issue 31.14: text is stored and read back by its length, whatever it holds.
    @Test func textIsKeptWholeWhateverItHolds() throws {
        let store = try AlertStore(path: directory + "/a.db") { Issue.record("unexpected: \($0)") }
        try store.record(Alert(kind: .notice, title: "a\u{0}b", body: "停电\u{0}通知 — the rest", urgency: .normal))
        let entry = try #require(try store.alerts(limit: 1).first)
        #expect(entry.title == "a\u{0}b" && entry.body == "停电\u{0}通知 — the rest")
    }

    @Test func seenNoticesSurviveReopeningAndFilesArePrivate() throws {
        let path = directory + "/state/ccrelay/alerts.db"
        do {
            let store = try AlertStore(path: path) { Issue.record("unexpected: \($0)") }
            try store.record(alert(.notice, "维护"), notice: "n-1")
            try store.record(alert(.notice, "again"), notice: "n-1")
            try store.record(alert(.notice, "维护-2"), notice: "维护-2")
        }
        let reopened = try AlertStore(path: path) { Issue.record("unexpected: \($0)") }
        #expect(reopened.seenNotices() == ["n-1", "维护-2"])
        #expect(try reopened.alerts(limit: 10).map(\.title) == ["维护-2", "again", "维护"])
        for name in ["alerts.db", "alerts.db-wal", "alerts.db-shm"] {
            let file = try FileManager.default.attributesOfItem(atPath: directory + "/state/ccrelay/" + name)
            #expect((file[.posixPermissions] as? Int) == 0o600, "\(name)")
        }
        let folder = try FileManager.default.attributesOfItem(atPath: directory + "/state/ccrelay")
        #expect((folder[.posixPermissions] as? Int) == 0o700)
    }

    /// Opening a journal changed the process's umask and put it back; two threads opening stores at
    /// once could leave it at 0077, and every program the test process started later (a desktop's
    /// /run/user folder) was made private by mistake.
    @Test func openingStoresOnManyThreadsLeavesTheProcessUmaskAlone() throws {
        let before = umask(0o022)
        umask(before)
        let paths = (0..<16).map { directory + "/many/\($0)/alerts.db" }
        DispatchQueue.concurrentPerform(iterations: paths.count) { index in
            _ = try? AlertStore(path: paths[index]) { _ in }
        }
        let after = umask(before)
        umask(after)
        #expect(after == before, "the umask was \(String(before, radix: 8)), now \(String(after, radix: 8))")
        for path in paths {
            let file = try FileManager.default.attributesOfItem(atPath: path)
            #expect((file[.posixPermissions] as? Int) == 0o600, "\(path)")
        }
    }

    @Test func theBadgeCountsUnacknowledgedAlertsAndKnowsWhenOneIsCritical() throws {
        let store = try AlertStore(path: directory + "/alerts.db") { Issue.record("unexpected: \($0)") }
        #expect(try store.badge() == BadgeState(count: 0, urgent: false))
        try store.record(alert(.keepAliveFailing))
        try store.record(alert(.backOnline, urgency: .low))
        #expect(try store.badge() == BadgeState(count: 1, urgent: false))
        try store.record(alert(.loggedOut, urgency: .critical))
        try store.record(alert(.notice))
        try store.setNotificationID(77, forNewest: .loggedOut)
        #expect(try store.badge() == BadgeState(count: 3, urgent: true))
        #expect(try store.acknowledge(kind: .loggedOut, at: 5) == 1)
        #expect(try store.badge() == BadgeState(count: 2, urgent: false))
        let entries = try store.alerts(limit: 10)
        let logout = try #require(entries.first { $0.kind == .loggedOut })
        #expect(logout.notificationID == 77 && logout.acknowledged && logout.acknowledgedAt == 5)
        #expect(entries.first { $0.kind == .backOnline }?.acknowledged == true)
        #expect(try store.alerts(limit: 10, kind: .notice).count == 1)
        #expect(try store.alerts(limit: 2).count == 2)
        #expect(try store.acknowledgeAll() == 2)
        #expect(try store.acknowledgeAll() == 0)
        #expect(try store.badge() == BadgeState(count: 0, urgent: false))
    }

    @Test func theJournalIsPrunedOfItsOldestAcknowledgedAlerts() throws {
        let store = try AlertStore(path: directory + "/alerts.db", journalLimit: 5, unreadLimit: 8) { _ in }
        try store.record(alert(.loggedOut, "unread-0"))
        for index in 1...6 { try store.record(alert(.notice, "read-\(index)")) }
        try store.acknowledge(kind: .notice)
        try store.record(alert(.credentials, "unread-7"))
        // Five newest kept; older acknowledged ones go, the old unread one stays.
        #expect(try store.alerts(limit: 100).map(\.title) == ["unread-7", "read-6", "read-5", "read-4", "read-3", "unread-0"])
        for index in 8...20 { try store.record(alert(.loggedOut, "unread-\(index)")) }
        let all = try store.alerts(limit: 100)
        #expect(all.count == 8 && all.first?.title == "unread-20" && all.last?.title == "unread-13")
        #expect(try store.badge().count == 8)
    }

    @Test func aVersion1FileIsMigratedKeepingItsNotices() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/alerts.db"
        let made = try run("/usr/bin/python3", ["-c", """
            import sqlite3
            c = sqlite3.connect('\(path)')
            c.executescript("CREATE TABLE notices_seen (id TEXT PRIMARY KEY, shown_at REAL NOT NULL); \
            INSERT INTO notices_seen VALUES ('old-1', 1.0); PRAGMA application_id = 1667461753; PRAGMA user_version = 1;")
            c.commit()
            """])
        #expect(made.status == 0, "\(made.standardError)")
        let store = try AlertStore(path: path) { Issue.record("unexpected: \($0)") }
        #expect(store.seenNotices() == ["old-1"])
        try store.record(alert(.notice), notice: "new-2")
        #expect(store.seenNotices() == ["old-1", "new-2"])
        let version = try run("/usr/bin/python3", ["-c", "import sqlite3; print(sqlite3.connect('\(path)').execute('pragma user_version').fetchone()[0])"])
        #expect(version.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "5")
    }

    /// Ten openers of one new file at the same moment, as the autostart entry
    /// and a dock's activation (and `ccrelay history`) do at first login: each
    /// gets the whole schema and the file ends at the current version.
    @Test func tenOpenersOfOneNewFileAtOnceAllGetAWholeJournal() throws {
        for round in 0..<8 {
            let path = directory + "/round-\(round)/alerts.db"
            let start = DispatchSemaphore(value: 0)
            let done = DispatchGroup()
            let failures = LockedMessages()
            for opener in 0..<10 {
                done.enter()
                Thread.detachNewThread {
                    defer { done.leave() }
                    start.wait()
                    do {
                        let store = try AlertStore(path: path) { failures.append("opener \(opener): \($0)") }
                        try store.record(Alert(kind: .notice, title: "from \(opener)", body: "", urgency: .normal))
                    } catch {
                        failures.append("opener \(opener): \(error)")
                    }
                }
            }
            for _ in 0..<10 { start.signal() }
            done.wait()
            #expect(failures.all.isEmpty, "round \(round): \(failures.all)")
            let store = try AlertStore(path: path) { Issue.record("unexpected: \($0)") }
            #expect(try store.alerts(limit: 100).count == 10, "round \(round)")
            #expect(try sqlite(path, "pragma user_version") == "5", "round \(round)")
        }
    }

    /// What ccrelay 0.1's racing migration left behind: every table, but
    /// `user_version` 1. It is repaired with every row kept, not abandoned.
    @Test func aFileWhoseVersionIsBehindItsTablesIsRepairedKeepingEveryRow() throws {
        let path = directory + "/alerts.db"
        do {
            let store = try AlertStore(path: path) { Issue.record("unexpected: \($0)") }
            try store.record(alert(.loggedOut, "kept"), forwardTo: { _ in ["webhook https://hooks.example/x"] })
            try store.record(alert(.notice, "notice"), notice: "n-1")
        }
        #expect(try sqlite(path, "pragma user_version = 1") == "")
        let messages = LockedMessages()
        let store = try AlertStore(path: path) { messages.append($0) }
        #expect(messages.all.isEmpty, "nothing moved aside: \(messages.all)")
        #expect(try store.alerts(limit: 10).map(\.title) == ["notice", "kept"])
        #expect(store.seenNotices() == ["n-1"])
        #expect(try store.waitingForDelivery(to: "webhook https://hooks.example/x", limit: 1).first?.title == "kept")
        #expect(try sqlite(path, "pragma user_version") == "5")
        try store.record(alert(.credentials, "after"))
        #expect(try store.alerts(limit: 10).count == 3)
    }

    /// One statement through Python's sqlite3 (another program's view of the file).
    func sqlite(_ path: String, _ statement: String) throws -> String {
        let result = try run("/usr/bin/python3", ["-c", """
            import sqlite3
            c = sqlite3.connect('\(path)', isolation_level=None)
            for row in c.execute('\(statement)'): print(row[0])
            """])
        guard result.status == 0 else { throw TestSetupError("python3: \(result.standardError)") }
        return result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func aFileOfANewerVersionIsMovedAsideNotDowngraded() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/alerts.db"
        _ = try run("/usr/bin/python3", ["-c", "import sqlite3; c=sqlite3.connect('\(path)'); c.execute('pragma application_id=1667461753'); c.execute('pragma user_version=99'); c.execute('create table t(x)'); c.commit()"])
        let messages = LockedMessages()
        _ = try AlertStore(path: path) { messages.append($0) }
        #expect(messages.all.first?.contains("newer ccrelay (schema 99)") == true)
    }

    @Test func theSessionIsSavedReplacedAndForgotten() throws {
        let store = try AlertStore(path: directory + "/alerts.db") { _ in }
        #expect(try store.savedSession() == nil)
        var snapshot = SessionSnapshot(server: "https://cc.example/", account: "/k.pem", token: "tok-secret", ip: "10.0.0.2",
                                       interval: 60, timeout: 180, seq: 12, deadline: 1_900_000_000.5)
        try store.saveSession(snapshot)
        snapshot.seq = 13
        try store.saveSession(snapshot)
        #expect(try store.savedSession() == snapshot)
        #expect(!"\(snapshot)".contains("tok-secret"))
        try store.saveSession(nil)
        #expect(try store.savedSession() == nil)
    }

    @Test func twoStoresOnOneFileWriteAtTheSameTimeWithoutLosingAnything() async throws {
        let path = directory + "/alerts.db"
        _ = try AlertStore(path: path) { _ in }
        await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<2 {
                group.addTask {
                    let store = try AlertStore(path: path) { _ in }
                    for index in 0..<200 {
                        try store.record(Alert(kind: .notice, title: "w\(writer)-\(index)", body: "", urgency: .normal))
                        if index % 10 == 0 { try store.acknowledgeAll() }
                    }
                }
            }
        }
        let store = try AlertStore(path: path) { _ in }
        let titles = Set(try store.alerts(limit: 1000).map(\.title))
        #expect(titles.count == 400)
    }

    @Test func aFileAnotherProcessKeepsLockedIsLeftAlone() async throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/alerts.db"
        // A version 1 file (it needs a migration, so opening it writes), locked exclusively.
        let holder = try ChildProcess("/usr/bin/python3", ["-u", "-c", """
            import sqlite3, time
            c = sqlite3.connect('\(path)', isolation_level=None)
            c.executescript("CREATE TABLE notices_seen (id TEXT PRIMARY KEY, shown_at REAL NOT NULL); \\
            INSERT INTO notices_seen VALUES ('kept', 1.0); PRAGMA application_id = 1667461753; PRAGMA user_version = 1;")
            c.execute('BEGIN EXCLUSIVE')
            print('locked')
            time.sleep(30)
            """])
        defer { holder.stop() }
        #expect(holder.readLine() == "locked")
        let messages = LockedMessages()
        #expect(throws: StoreError.self) { try AlertStore(path: path, busyTimeout: 100) { messages.append($0) } }
        #expect(messages.all.isEmpty, "nothing moved aside: \(messages.all)")
        holder.stop()
        _ = holder.wait()
        #expect(try AlertStore(path: path) { _ in }.seenNotices() == ["kept"], "the same file, migrated once free")
    }

    @Test func aBrokenOrForeignFileIsMovedAsideAndAFreshOneMade() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/garbage.db"
        try Data("this is not a database at all, just text".utf8).write(to: URL(fileURLWithPath: path))
        let messages = LockedMessages()
        let store = try AlertStore(path: path) { messages.append($0) }
        #expect(store.seenNotices().isEmpty)
        try store.record(alert(.notice), notice: "n")
        #expect(messages.all.count == 1 && messages.all[0].contains("moved it to"))
        let aside = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix("garbage.db.broken-") }
        #expect(aside.count == 1)
        // A SQLite file of another program is not touched either.
        let foreign = directory + "/foreign.db"
        let made = try run("/usr/bin/python3", ["-c", "import sqlite3; c=sqlite3.connect('\(foreign)'); c.execute('create table t(x)'); c.execute('pragma application_id=42'); c.commit()"])
        #expect(made.status == 0, "\(made.standardError)")
        let foreignMessages = LockedMessages()
        _ = try AlertStore(path: foreign) { foreignMessages.append($0) }
        #expect(foreignMessages.all.first?.contains("not a ccrelay database") == true)
    }
}

final class LockedMessages: @unchecked Sendable {
    // Guard: `lock`.
    private let lock = NSLock()
    private var messages: [String] = []
    func append(_ message: String) { lock.withLock { messages.append(message) } }
    var all: [String] { lock.withLock { messages } }
}

/// The timeline's table (issue 25): bounded, oldest first out, read with the state before the window.
@Suite struct TimelineStoreTests {
    @Test func theTimelineKeepsItsNewestRowsAndTheStateBeforeTheWindow() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-timeline-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try AlertStore(path: folder + "/alerts.db", timelineLimit: 5, log: { _ in })
        for index in 0..<8 {
            try store.recordTimeline(TimelineEntry(at: Double(index * 10), subject: .state, from: "offline", to: "online", cause: "cause \(index)"))
        }
        let all = try store.timeline(since: 0)
        #expect(all.map(\.cause) == (3..<8).map { "cause \($0)" }, "the newest five: \(all.map(\.cause))")
        let window = try store.timeline(since: 55)
        #expect(window.map(\.cause) == ["cause 5", "cause 6", "cause 7"], "the last before 55, then the window: \(window.map(\.cause))")
    }
}
