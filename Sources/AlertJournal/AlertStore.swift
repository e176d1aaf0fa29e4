import EventLoop
import CCRelayCore
import CoreVocabulary
import Forwarding
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's state on disk: `$XDG_STATE_HOME/ccrelay/alerts.db` (SQLite,
/// WAL, directory 0700, file 0600, schema versioned with `user_version` and
/// migrated forward). It holds the alert journal (and so the badge: the
/// alerts not acknowledged), the campus notices already shown, the last
/// CC/1 session for a restart without a new login, and the outbox of alerts
/// forwarded off the machine (AlertStore+Outbox.swift).
///
/// Every change is one transaction: a process killed at any point leaves
/// each alert and acknowledgement either fully recorded or not begun. The
/// daemon and the CLI may use the file at the same time (WAL; writers wait
/// up to `busyTimeout`, 5 s, for each other: at first login the autostart
/// entry, a dock and a command may open it together on a slow disk). A file
/// SQLite reports corrupt, or a database of another program (another `application_id`, or tables of its
/// own), is moved aside (`alerts.db.broken-<time>`) with a message and a
/// fresh one is made. A file another process keeps locked, or on a full,
/// read-only or failing disk, is left alone: the open fails with that cause.
/// Confinement: one store per thread of use (the daemon's loop, or the CLI).
public final class AlertStore {
    var database: SQLiteDatabase
    public let path: String
    /// Acknowledged alerts beyond the newest `journalLimit` are pruned; the
    /// unacknowledged ones only beyond `unreadLimit` (a user away for years).
    let journalLimit: Int
    let unreadLimit: Int
    /// Alerts kept waiting for each forwarding target (`pruneOutbox`).
    let outboxLimit: Int
    /// 10,000 alerts a target: as many as the journal keeps unread.
    public static let outboxLimitDefault = 10_000
    /// Told how many waiting alerts a full outbox dropped (oldest first), so that it is said.
    public var onForwardsDropped: ((Int) -> Void)?

    /// The schema version this code writes; older files are migrated.
    public static let schemaVersion: Int64 = 5
    /// "ccry": a SQLite file without it is another program's, not ours to change.
    static let applicationID: Int64 = 0x6363_7279

    /// `$XDG_STATE_HOME/ccrelay/alerts.db`, or `~/.local/state/ccrelay/alerts.db`.
    public static func defaultPath() -> String {
        if let base = getenv("XDG_STATE_HOME").map({ String(cString: $0) }), base.hasPrefix("/") {
            return base + "/ccrelay/alerts.db"
        }
        return (getenv("HOME").map { String(cString: $0) } ?? "/") + "/.local/state/ccrelay/alerts.db"
    }

    /// Opens (or creates) the store; `log` hears about a file moved aside.
    public init(path: String, journalLimit: Int = 1000, unreadLimit: Int = 10_000, outboxLimit: Int = AlertStore.outboxLimitDefault,
                timelineLimit: Int = AlertStore.timelineLimit, busyTimeout: Int32 = 5000, log: (String) -> Void) throws(StoreError) {
        self.path = path
        self.timelineRows = timelineLimit
        self.journalLimit = journalLimit
        self.unreadLimit = unreadLimit
        self.outboxLimit = outboxLimit
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        try Self.makeDirectory(directory)
        do {
            database = try Self.openRacing(path, busyTimeout: busyTimeout)
        } catch where error.cause == .busy {
            // Locked by another process for longer than busyTimeout: the file is fine.
            throw StoreError("\(path) is locked by another process: \(error)", cause: .busy)
        } catch where error.cause != .damaged {
            // A full, read-only or failing disk: the file may be perfectly healthy.
            throw StoreError("\(path) cannot be used now: \(error)", cause: error.cause)
        } catch {
            let damage = error
            let aside = path + ".broken-\(Int(WallClock.now()))"
            do throws(SystemError) {
                try systemCall("rename \(path) to \(aside)") { rename(path, aside) }
                for companion in [path + "-wal", path + "-shm"] {
                    do throws(SystemError) {
                        try systemCall("unlink \(companion)") { unlink(companion) }
                    } catch where error.errno == ENOENT {}
                }
            } catch {
                throw StoreError("\(path) is damaged (\(damage)) and cannot be moved aside: \(error)", cause: .unavailable)
            }
            log("\(path) was unreadable (\(damage)); moved it to \(aside) and started a fresh one")
            database = try Self.open(path, busyTimeout: busyTimeout)
        }
    }

    /// `open`, tried again while the file is busy, for up to `busyTimeout`:
    /// openers of one new file at once (the autostart entry, a dock's
    /// activation and a command at first login) can be told "locked" by
    /// SQLite without its busy handler being asked — switching a new file to
    /// WAL takes an exclusive lock, and a waiting reader would deadlock.
    private static func openRacing(_ path: String, busyTimeout: Int32) throws(StoreError) -> SQLiteDatabase {
        let deadline = WallClock.now() + Double(busyTimeout) / 1000
        while true {
            do {
                return try open(path, busyTimeout: busyTimeout)
            } catch where error.cause == .busy && WallClock.now() < deadline {
                usleep(20_000)
            }
        }
    }

    private static func open(_ path: String, busyTimeout: Int32) throws(StoreError) -> SQLiteDatabase {
        // A new journal is made private before SQLite opens it (its -wal and -shm files take the
        // database's mode). Not by umask: that is the whole process's, and two threads opening
        // stores at once (the test process) could leave it at 0077 for every program started later.
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if descriptor >= 0 { close(descriptor) }
        let database = try SQLiteDatabase(path: path)
        do throws(SystemError) {
            try systemCall("chmod 600 \(path)") { chmod(path, 0o600) }
        } catch {
            throw StoreError("\(error); the journal must be private", cause: .unavailable)
        }
        database.setBusyTimeout(milliseconds: busyTimeout)
        try database.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL")
        // Another process may be opening the same new file this very moment
        // (the autostart entry and a dock's D-Bus activation at first login):
        // the version is read and the schema brought up to date under one
        // write lock, so no one ever acts on a version another has moved on.
        let ours = try database.integer("PRAGMA application_id") == applicationID
        let version = try database.integer("PRAGMA user_version")
        if !ours || version != schemaVersion {
            try database.transaction { () throws(StoreError) in
                let application = try database.integer("PRAGMA application_id")
                let version = try database.integer("PRAGMA user_version")
                let tables = try database.integer("SELECT count(*) FROM sqlite_master")
                guard application == 0 && version == 0 && tables == 0 || application == applicationID else {
                    throw StoreError("not a ccrelay database (application_id \(application), \(tables) schema objects)", cause: .damaged)
                }
                guard version <= schemaVersion else {
                    throw StoreError("written by a newer ccrelay (schema \(version))", cause: .damaged)
                }
                if version < schemaVersion { try migrate(database) }
            }
        }
        // Reading every table proves the file is whole before the daemon relies on it.
        do {
            _ = try database.integer("SELECT (SELECT count(*) FROM notices_seen) + (SELECT count(*) FROM alerts) + (SELECT count(*) FROM session) + (SELECT count(*) FROM outbox) + (SELECT count(*) FROM timeline)")
        } catch where error.cause == .other {
            throw StoreError("a ccrelay database without its tables: \(error)", cause: .damaged)
        }
        return database
    }

    /// Brings the file to `schemaVersion`, inside the caller's write
    /// transaction. Every step is idempotent (`IF NOT EXISTS`), and every
    /// step runs whatever the recorded version says: a file whose version is
    /// behind its tables (left by ccrelay 0.1's migration racing itself) is
    /// repaired, keeping every row, instead of failing on "table already exists".
    private static func migrate(_ database: SQLiteDatabase) throws(StoreError) {
        try database.execute("""
            CREATE TABLE IF NOT EXISTS notices_seen (id TEXT PRIMARY KEY, shown_at REAL NOT NULL);
            CREATE TABLE IF NOT EXISTS alerts (
                id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, title TEXT NOT NULL,
                body TEXT NOT NULL, urgency INTEGER NOT NULL, posted_at REAL NOT NULL,
                notification_id INTEGER, acknowledged INTEGER NOT NULL DEFAULT 0, acknowledged_at REAL);
            CREATE INDEX IF NOT EXISTS alerts_unread ON alerts (acknowledged, kind);
            CREATE TABLE IF NOT EXISTS session (
                singleton INTEGER PRIMARY KEY CHECK (singleton = 1), server TEXT NOT NULL,
                account TEXT NOT NULL, token TEXT NOT NULL, ip TEXT NOT NULL, interval INTEGER NOT NULL,
                timeout INTEGER NOT NULL, seq INTEGER NOT NULL, deadline REAL NOT NULL);
            CREATE TABLE IF NOT EXISTS outbox (
                alert_id INTEGER NOT NULL, target TEXT NOT NULL, key TEXT NOT NULL, queued_at REAL NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0, delivered_at REAL, last_error TEXT, answer TEXT,
                PRIMARY KEY (alert_id, target));
            CREATE INDEX IF NOT EXISTS outbox_waiting ON outbox (target, delivered_at, alert_id);
            CREATE TABLE IF NOT EXISTS timeline (
                id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, subject TEXT NOT NULL,
                from_value TEXT NOT NULL, to_value TEXT NOT NULL, cause TEXT NOT NULL);
            CREATE INDEX IF NOT EXISTS timeline_at ON timeline (at);
            """)
        // Schema 4: an alert a target refused for good (413) no longer holds up the rest.
        var hasRefused = false
        try database.run("PRAGMA table_info(outbox)") { if $0.text(1) == "refused_at" { hasRefused = true } }
        if !hasRefused { try database.execute("ALTER TABLE outbox ADD COLUMN refused_at REAL") }
        // Schema 4: the outbox names a target by what stays when its secret is fixed (ForwardTarget.name).
        var stored: [String] = []
        try database.run("SELECT DISTINCT target FROM outbox") { stored.append($0.text(0)) }
        for old in stored {
            guard let new = ForwardTarget.name(ofStored: old), new != old else { continue }
            try database.run("UPDATE OR IGNORE outbox SET target = ? WHERE target = ?", [.text(new), .text(old)])
            try database.run("DELETE FROM outbox WHERE target = ?", [.text(old)])
        }
        try database.execute("PRAGMA application_id = \(applicationID); PRAGMA user_version = \(schemaVersion);")
    }

    private static func makeDirectory(_ directory: String) throws(StoreError) {
        var built = ""
        for part in directory.split(separator: "/") {
            built += "/" + part
            do throws(SystemError) {
                try systemCall("mkdir \(built)") { mkdir(built, 0o700) }
            } catch where error.errno == EEXIST {
            } catch {
                throw StoreError("cannot create \(built): \(error.reason)", cause: .unavailable)
            }
        }
        do throws(SystemError) {
            try systemCall("chmod 700 \(directory)") { chmod(directory, 0o700) }
        } catch {
            throw StoreError("\(error); the state folder must be private", cause: .unavailable)
        }
    }

    /// The wall clock, in seconds since the Unix epoch.
    public static var now: Double { WallClock.now() }

    // MARK: Notices

    /// Ids of every notice shown so far.
    public func seenNotices() -> Set<String> {
        var ids: Set<String> = []
        try? database.run("SELECT id FROM notices_seen") { ids.insert($0.text(0)) }
        return ids
    }

    // MARK: Journal

    /// Records an alert (with the notice it shows, remembered as seen in the
    /// same transaction) and prunes the journal; returns its row id. Alerts
    /// that add nothing to the badge (back online) are recorded as acknowledged.
    @discardableResult
    public func record(_ alert: Alert, notice: String? = nil, at time: Double = AlertStore.now,
                       forwardTo: (Alert) -> [String] = { _ in [] }) throws(StoreError) -> Int64 {
        try record([(alert, notice)], at: time, forwardTo: forwardTo)
    }

    /// Records several alerts in one transaction (the notices of one reply),
    /// each queued in the outbox for the targets `forwardTo` names, in the
    /// same transaction; returns the row id of the last.
    @discardableResult
    public func record(_ alerts: [(Alert, notice: String?)], at time: Double = AlertStore.now,
                       forwardTo: (Alert) -> [String] = { _ in [] }) throws(StoreError) -> Int64 {
        try database.transaction { () throws(StoreError) -> Int64 in
            var last: Int64 = 0
            for (alert, notice) in alerts {
                let read = alert.kind.badgeIncrement == 0
                try database.run(
                    "INSERT INTO alerts (kind, title, body, urgency, posted_at, acknowledged, acknowledged_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [.text(alert.kind.rawValue), .text(alert.title), .text(alert.body), .integer(Int64(alert.urgency.rawValue)),
                     .real(time), .integer(read ? 1 : 0), read ? .real(time) : .null])
                last = database.lastInsertedRow
                if let notice {
                    try database.run("INSERT OR IGNORE INTO notices_seen (id, shown_at) VALUES (?, ?)", [.text(notice), .real(time)])
                }
                try enqueue(alert: last, for: forwardTo(alert), at: time)
            }
            try prune()
            return last
        }
    }

    private func prune() throws(StoreError) {
        try database.run(
            "DELETE FROM alerts WHERE acknowledged = 1 AND id NOT IN (SELECT id FROM alerts ORDER BY id DESC LIMIT ?)",
            [.integer(Int64(journalLimit))])
        try database.run(
            "DELETE FROM alerts WHERE id NOT IN (SELECT id FROM alerts ORDER BY id DESC LIMIT ?)", [.integer(Int64(unreadLimit))])
        try pruneOutbox()
    }

    /// Remembers the notification server's id for the newest alert of `kind`.
    public func setNotificationID(_ id: UInt32, forNewest kind: AlertKind) throws(StoreError) {
        try database.run(
            "UPDATE alerts SET notification_id = ? WHERE id = (SELECT max(id) FROM alerts WHERE kind = ?)",
            [.integer(Int64(id)), .text(kind.rawValue)])
    }

    /// Acknowledges every unread alert of `kind` (its bubble was clicked or
    /// dismissed: one bubble per kind); returns how many.
    @discardableResult
    public func acknowledge(kind: AlertKind, postedBefore: Double = .infinity, at time: Double = AlertStore.now) throws(StoreError) -> Int {
        try database.run(
            "UPDATE alerts SET acknowledged = 1, acknowledged_at = ? WHERE acknowledged = 0 AND kind = ? AND posted_at < ?",
            [.real(time), .text(kind.rawValue), .real(postedBefore.isFinite ? postedBefore : Double.greatestFiniteMagnitude)])
        return database.changes
    }

    /// Acknowledges the alert with journal id `id`; returns whether it was unread.
    @discardableResult
    public func acknowledge(id: Int64, at time: Double = AlertStore.now) throws(StoreError) -> Bool {
        try database.run(
            "UPDATE alerts SET acknowledged = 1, acknowledged_at = ? WHERE acknowledged = 0 AND id = ?", [.real(time), .integer(id)])
        return database.changes > 0
    }

    /// Acknowledges every unread alert (`ccrelay badge clear`); returns how many.
    @discardableResult
    public func acknowledgeAll(at time: Double = AlertStore.now) throws(StoreError) -> Int {
        try database.run("UPDATE alerts SET acknowledged = 1, acknowledged_at = ? WHERE acknowledged = 0", [.real(time)])
        return database.changes
    }

    /// The kinds that have an unread alert.
    public func unreadKinds() throws(StoreError) -> Set<AlertKind> {
        var kinds: Set<AlertKind> = []
        try database.run("SELECT DISTINCT kind FROM alerts WHERE acknowledged = 0") { row in
            if let kind = AlertKind(rawValue: row.text(0)) { kinds.insert(kind) }
        }
        return kinds
    }

    /// The unread count and whether a critical alert is among them.
    public func badge() throws(StoreError) -> BadgeState {
        var state = BadgeState(count: 0, urgent: false)
        try database.run("SELECT count(*), coalesce(max(urgency), 0) FROM alerts WHERE acknowledged = 0") { row in
            state = BadgeState(count: Int(row.integer(0)), urgent: row.integer(1) >= Int64(Urgency.critical.rawValue))
        }
        return state
    }

    // MARK: Timeline

    /// The most timeline entries kept by default; the oldest go first.
    public static let timelineLimit = 10_000
    /// The most this store keeps.
    private let timelineRows: Int

    /// Records one change (schema 5's `timeline`), keeping the newest `timelineLimit`.
    public func recordTimeline(_ entry: TimelineEntry) throws(StoreError) {
        try database.transaction { () throws(StoreError) in
            try database.run(
                "INSERT INTO timeline (at, subject, from_value, to_value, cause) VALUES (?, ?, ?, ?, ?)",
                [.real(entry.at), .text(entry.subject.rawValue), .text(entry.from), .text(entry.to), .text(String(entry.cause.prefix(500)))])
            try database.run(
                "DELETE FROM timeline WHERE id <= (SELECT id FROM timeline ORDER BY id DESC LIMIT 1 OFFSET ?)",
                [.integer(Int64(timelineRows))])
        }
    }

    /// The entries from `since` on, oldest first, after the last state entry
    /// before it (what the state was when the window opened).
    public func timeline(since: Double) throws(StoreError) -> [TimelineEntry] {
        var entries: [TimelineEntry] = []
        let read: (SQLiteRow) -> Void = { row in
            guard let subject = TimelineEntry.Subject(rawValue: row.text(1)) else { return }
            entries.append(TimelineEntry(
                at: Self.time(row.real(0)) ?? 0, subject: subject, from: row.text(2, limit: 32), to: row.text(3, limit: 32),
                cause: row.text(4, limit: 500)))
        }
        try database.run(
            "SELECT at, subject, from_value, to_value, cause FROM timeline WHERE subject = 'state' AND at < ? ORDER BY id DESC LIMIT 1",
            [.real(since)], row: read)
        try database.run(
            "SELECT at, subject, from_value, to_value, cause FROM timeline WHERE at >= ? ORDER BY id LIMIT ?",
            [.real(since), .integer(Int64(Self.timelineLimit))], row: read)
        return entries
    }

    /// The newest `limit` alerts (of `kind`, when given), newest first.
    public func alerts(limit: Int, kind: AlertKind? = nil) throws(StoreError) -> [JournalEntry] {
        var entries: [JournalEntry] = []
        let filter = kind == nil ? "" : "WHERE kind = ?"
        let values: [SQLiteValue] = (kind.map { [.text($0.rawValue)] } ?? []) + [.integer(Int64(max(0, limit)))]
        try database.run(
            """
            SELECT id, kind, title, body, urgency, posted_at, notification_id, acknowledged, acknowledged_at,
                (SELECT count(*) FROM outbox WHERE alert_id = alerts.id AND delivered_at IS NOT NULL),
                (SELECT count(*) FROM outbox WHERE alert_id = alerts.id AND delivered_at IS NULL AND refused_at IS NULL),
                (SELECT count(*) FROM outbox o WHERE o.alert_id = alerts.id AND o.delivered_at IS NOT NULL AND EXISTS
                    (SELECT 1 FROM outbox p WHERE p.target = o.target AND p.delivered_at = o.delivered_at AND p.alert_id <> o.alert_id))
            FROM alerts \(filter) ORDER BY id DESC LIMIT ?
            """, values
        ) { row in
            // A kind written by a newer ccrelay is shown as a notice rather than hidden.
            // Values read back are bounded like network input.
            let kind = AlertKind(rawValue: row.text(1)) ?? .notice
            entries.append(JournalEntry(
                id: row.integer(0), kind: kind, title: row.text(2, limit: Self.textLimit),
                body: row.text(3, limit: Self.textLimit),
                urgency: Urgency(rawValue: UInt8(clamping: row.integer(4))) ?? .normal, postedAt: Self.time(row.real(5)) ?? 0,
                notificationID: row.isNull(6) ? nil : UInt32(clamping: row.integer(6)), acknowledged: row.integer(7) != 0,
                acknowledgedAt: row.isNull(8) ? nil : Self.time(row.real(8)),
                forwarded: Int(clamping: row.integer(9)), forwardWaiting: Int(clamping: row.integer(10)),
                forwardedInDigest: Int(clamping: row.integer(11))))
        }
        return entries
    }

    /// The longest title or body read back (an alert's own limit is 1,000).
    static let textLimit = 4_000

    /// A time read back: finite, from 1970 to the year 9999, else nil.
    static func time(_ value: Double) -> Double? {
        value.isFinite && value >= 0 && value < 253_402_300_800 ? value : nil
    }

    // MARK: Session

    /// Remembers the live session, or forgets it (nil). Written after every
    /// keep-alive, so without an fsync (`synchronous = NORMAL`: safe against a
    /// crash, not a power cut, which at worst costs one quiet login).
    public func saveSession(_ snapshot: SessionSnapshot?) throws(StoreError) {
        try database.execute("PRAGMA synchronous = NORMAL")
        defer { try? database.execute("PRAGMA synchronous = FULL") }
        guard let snapshot else {
            try database.run("DELETE FROM session")
            return
        }
        try database.run(
            "INSERT OR REPLACE INTO session (singleton, server, account, token, ip, interval, timeout, seq, deadline) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?)",
            [.text(snapshot.server), .text(snapshot.account), .text(snapshot.token), .text(snapshot.ip),
             .integer(Int64(snapshot.interval)), .integer(Int64(snapshot.timeout)), .integer(Int64(bitPattern: snapshot.seq)),
             .real(snapshot.deadline)])
    }

    /// The session last saved, if any.
    public func savedSession() throws(StoreError) -> SessionSnapshot? {
        var snapshot: SessionSnapshot?
        try database.run("SELECT server, account, token, ip, interval, timeout, seq, deadline FROM session") { row in
            snapshot = SessionSnapshot(
                server: row.text(0), account: row.text(1), token: row.text(2), ip: row.text(3), interval: Int(row.integer(4)),
                timeout: Int(row.integer(5)), seq: UInt64(bitPattern: row.integer(6)), deadline: row.real(7))
        }
        return snapshot
    }
}
