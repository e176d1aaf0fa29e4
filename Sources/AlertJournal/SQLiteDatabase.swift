import CSQLite

/// A value bound to a `?` of a statement.
enum SQLiteValue {
    case integer(Int64)
    case real(Double)
    case text(String)
    case null
}

/// One row of a query, read by column index.
struct SQLiteRow {
    fileprivate let statement: OpaquePointer

    func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }
    func real(_ column: Int32) -> Double { sqlite3_column_double(statement, column) }
    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }
    /// The column's whole text, its length from SQLite (a NUL inside would end a C string).
    func text(_ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(statement, column) else { return "" }
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }
    /// Text cut to `limit` characters: a value read back is bounded like network input.
    func text(_ column: Int32, limit: Int) -> String {
        let value = text(column)
        return value.count > limit ? String(value.prefix(limit)) : value
    }
}

/// A SQLite connection: the funnel every call into libsqlite3 goes through.
/// Not thread-safe (opened with SQLITE_OPEN_NOMUTEX): one owner at a time.
final class SQLiteDatabase {
    private var handle: OpaquePointer?

    /// Opens or creates `path`. The handle is closed by `close()` or deinit,
    /// also when opening fails (sqlite3_open_v2 hands one out even then).
    init(path: String) throws(StoreError) {
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let result = sqlite3_open_v2(path, &handle, flags, nil)
        guard result == SQLITE_OK else {
            let error = StoreError("cannot open \(path): \(lastError)", cause: Self.cause(of: result & 0xff))
            close()
            throw error
        }
    }

    deinit { close() }

    func close() {
        sqlite3_close_v2(handle)
        handle = nil
    }

    /// How long a statement waits for another process's write lock.
    func setBusyTimeout(milliseconds: Int32) { sqlite3_busy_timeout(handle, milliseconds) }

    var lastError: String { handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory" }

    /// The last failure as an error, its cause read from SQLite's result code.
    private func failure(_ text: String? = nil) -> StoreError {
        let code = handle.map { sqlite3_errcode($0) & 0xff } ?? SQLITE_NOMEM
        return StoreError(text ?? lastError, cause: Self.cause(of: code))
    }

    /// What a primary result code means for the file.
    static func cause(of code: Int32) -> StoreError.Cause {
        switch code {
        case SQLITE_BUSY, SQLITE_LOCKED: .busy
        case SQLITE_FULL, SQLITE_IOERR, SQLITE_READONLY, SQLITE_CANTOPEN, SQLITE_PERM, SQLITE_NOMEM, SQLITE_PROTOCOL,
            SQLITE_AUTH, SQLITE_NOLFS:
            .unavailable
        case SQLITE_CORRUPT, SQLITE_NOTADB, SQLITE_FORMAT: .damaged
        default: .other
        }
    }

    /// Runs one or more statements without parameters.
    func execute(_ sql: String) throws(StoreError) {
        var error: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(handle, sql, nil, nil, &error) == SQLITE_OK else {
            let text = error.map { String(cString: $0) }
            sqlite3_free(error)
            throw failure(text)
        }
    }

    /// Runs one statement with `values` bound; calls `row` for each result row.
    func run(_ sql: String, _ values: [SQLiteValue] = [], row: (SQLiteRow) -> Void = { _ in }) throws(StoreError) {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw failure()
        }
        defer { sqlite3_finalize(statement) }
        for (index, value) in values.enumerated() {
            let position = Int32(index + 1)
            switch value {
            case .integer(let number): sqlite3_bind_int64(statement, position, number)
            case .real(let number): sqlite3_bind_double(statement, position, number)
            // Its length in bytes, not up to a NUL.
            case .text(let text): sqlite3_bind_text(statement, position, text, Int32(clamping: text.utf8.count), csqlite_transient())
            case .null: sqlite3_bind_null(statement, position)
            }
        }
        while true {
            switch sqlite3_step(statement) {
            case SQLITE_ROW: row(SQLiteRow(statement: statement))
            case SQLITE_DONE: return
            default: throw failure()
            }
        }
    }

    /// The first column of the first row of a query.
    func integer(_ sql: String, _ values: [SQLiteValue] = []) throws(StoreError) -> Int64 {
        var result: Int64?
        try run(sql, values) { if result == nil { result = $0.integer(0) } }
        guard let result else { throw StoreError("no result for \(sql)") }
        return result
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// The rowid of the last INSERT.
    var lastInsertedRow: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Runs `body` in one write transaction (BEGIN IMMEDIATE): all of it
    /// lands, or none of it, also when the process dies in the middle.
    func transaction<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }
}
