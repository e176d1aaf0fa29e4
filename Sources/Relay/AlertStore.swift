import CSQLite
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's state on disk: `$XDG_STATE_HOME/ccrelay/alerts.db` (SQLite,
/// WAL, directory 0700, file 0600, schema versioned with `user_version`).
/// Today it remembers which campus notices were shown, so that each is shown
/// once, ever, across restarts.
///
/// A corrupt or foreign file is moved aside (`alerts.db.broken-<time>`) with a
/// message and a fresh one is made: the keep-alive loop never waits on it.
/// Confinement: one store per thread of use (the daemon's queue).
public final class AlertStore {
    private var database: OpaquePointer?
    public let path: String

    /// The schema version this code writes; older files are migrated.
    static let schemaVersion: Int32 = 1

    /// `$XDG_STATE_HOME/ccrelay/alerts.db`, or `~/.local/state/ccrelay/alerts.db`.
    public static func defaultPath() -> String {
        if let base = getenv("XDG_STATE_HOME").map({ String(cString: $0) }), base.hasPrefix("/") {
            return base + "/ccrelay/alerts.db"
        }
        return (getenv("HOME").map { String(cString: $0) } ?? "/") + "/.local/state/ccrelay/alerts.db"
    }

    /// Opens (or creates) the store; `log` hears about a file moved aside.
    public init(path: String, log: (String) -> Void) throws(RelayError) {
        self.path = path
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        try Self.makeDirectory(directory)
        do {
            try open()
        } catch {
            close()
            let aside = path + ".broken-\(Int(Date().timeIntervalSince1970))"
            rename(path, aside)
            unlink(path + "-wal")
            unlink(path + "-shm")
            log("\(path) was unreadable (\(error)); moved it to \(aside) and started a fresh one")
            try open()
        }
    }

    deinit { close() }

    private func open() throws(RelayError) {
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        guard sqlite3_open_v2(path, &database, flags, nil) == SQLITE_OK else {
            throw RelayError("cannot open \(path): \(message)")
        }
        chmod(path, 0o600)
        sqlite3_busy_timeout(database, 2000)
        try execute("PRAGMA journal_mode = WAL")
        let version = try integer("PRAGMA user_version")
        let application = try integer("PRAGMA application_id")
        // 0x63637279 is "ccry": a file of another program is not ours to change.
        guard application == 0 && version == 0 || application == 0x6363_7279 else {
            throw RelayError("not a ccrelay database (application_id \(application))")
        }
        guard version <= Self.schemaVersion else {
            throw RelayError("written by a newer ccrelay (schema \(version))")
        }
        if version < 1 {
            try execute("""
                BEGIN;
                CREATE TABLE IF NOT EXISTS notices_seen (id TEXT PRIMARY KEY, shown_at REAL NOT NULL);
                PRAGMA application_id = \(0x6363_7279);
                PRAGMA user_version = 1;
                COMMIT;
                """)
        }
        _ = try integer("SELECT count(*) FROM notices_seen")
    }

    private func close() {
        sqlite3_close_v2(database)
        database = nil
    }

    private static func makeDirectory(_ directory: String) throws(RelayError) {
        var built = ""
        for part in directory.split(separator: "/") {
            built += "/" + part
            if mkdir(built, 0o700) != 0 && errno != EEXIST {
                throw RelayError("cannot create \(built): \(String(cString: strerror(errno)))")
            }
        }
        chmod(directory, 0o700)
    }

    private var message: String { database.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory" }

    private func execute(_ sql: String) throws(RelayError) {
        var error: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(database, sql, nil, nil, &error) == SQLITE_OK else {
            let text = error.map { String(cString: $0) } ?? message
            sqlite3_free(error)
            throw RelayError(text)
        }
    }

    private func integer(_ sql: String) throws(RelayError) -> Int64 {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(database, sql, -1, &statement, nil) == SQLITE_OK else { throw RelayError(message) }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else { throw RelayError(message) }
        return sqlite3_column_int64(statement, 0)
    }

    /// Ids of every notice shown so far.
    public func seenNotices() -> Set<String> {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(database, "SELECT id FROM notices_seen", -1, &statement, nil) == SQLITE_OK else { return [] }
        defer { sqlite3_finalize(statement) }
        var ids: Set<String> = []
        while sqlite3_step(statement) == SQLITE_ROW {
            if let text = sqlite3_column_text(statement, 0) { ids.insert(String(cString: text)) }
        }
        return ids
    }

    /// Remembers that notice `id` was shown (durably, before returning).
    public func markNoticeSeen(_ id: String) throws(RelayError) {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(database, "INSERT OR IGNORE INTO notices_seen (id, shown_at) VALUES (?, ?)", -1, &statement, nil)
            == SQLITE_OK
        else { throw RelayError(message) }
        defer { sqlite3_finalize(statement) }
        sqlite3_bind_text(statement, 1, id, -1, csqlite_transient())
        sqlite3_bind_double(statement, 2, Date().timeIntervalSince1970)
        guard sqlite3_step(statement) == SQLITE_DONE else { throw RelayError(message) }
    }
}
