import AlertJournal
import Foundation
import DesktopServices
import CCRelayCore
import CoreVocabulary
import TestSupport
import Testing

/// alerts.db under a full, read-only disk and with hostile contents: the
/// file is kept unless SQLite says it is corrupt or it belongs to another
/// program, and values read back are validated like network input.
@Suite(.serialized) struct AlertStoreFaultTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-faults-\(UUID().uuidString)").path

    func alert(_ title: String) -> Alert { Alert(kind: .notice, title: title, body: "body of \(title)", urgency: .normal) }

    /// A small tmpfs of our own (root, as in CI), unmounted afterwards.
    func withSmallDisk(_ body: (String) throws -> Void) throws {
        let mountPoint = directory + "/disk"
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mounted = try run("/bin/mount", ["-t", "tmpfs", "-o", "size=512k", "tmpfs", mountPoint])
        try #require(mounted.status == 0, "mounting a tmpfs needs root: \(mounted.standardError)")
        defer { _ = try? run("/bin/umount", ["-l", mountPoint]) }
        try body(mountPoint)
    }

    func fill(_ directory: String) throws {
        _ = try run("/bin/sh", ["-c", "dd if=/dev/zero of='\(directory)/filler' bs=4k 2>/dev/null; true"])
    }

    @Test func aFullDiskIsTransientAndNeverMovesAHealthyJournalAside() throws {
        try withSmallDisk { disk in
            let path = disk + "/ccrelay/alerts.db"
            var messages: [String] = []
            do {
                let store = try AlertStore(path: path) { messages.append($0) }
                try store.record(alert("shown before the disk filled"), notice: "n-1")
            }
            // Closed (its -wal and -shm are gone), then the disk fills up.
            try fill(disk)
            do {
                let store = try AlertStore(path: path) { messages.append($0) }
                var failure: StoreError?
                for index in 0..<200 {
                    do { try store.record(alert(String(repeating: "x", count: 900) + "\(index)")) } catch {
                        failure = error as? StoreError
                        break
                    }
                }
                #expect(failure?.cause == .unavailable, "a full disk: \(String(describing: failure))")
            } catch {
                #expect((error as? StoreError)?.cause == .unavailable, "\(error)")
            }
            // Every later open — the daemon's or a CLI call's — keeps the file.
            for _ in 0..<3 {
                do {
                    _ = try AlertStore(path: path) { messages.append($0) }
                } catch {
                    let cause = (error as? StoreError)?.cause
                    #expect(cause == .unavailable || cause == .busy, "\(error)")
                }
            }
            #expect(!messages.contains { $0.contains("moved it to") }, "\(messages)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: disk + "/ccrelay").allSatisfy { !$0.contains("broken") })
            try FileManager.default.removeItem(atPath: disk + "/filler")
            let store = try AlertStore(path: path) { Issue.record("unexpected: \($0)") }
            #expect(store.seenNotices().contains("n-1"), "the notice already shown stays seen")
        }
    }

    @Test func aReadOnlyDiskIsTransientToo() throws {
        try withSmallDisk { disk in
            let path = disk + "/ccrelay/alerts.db"
            do {
                let store = try AlertStore(path: path) { Issue.record("unexpected: \($0)") }
                try store.record(alert("kept"), notice: "n-ro")
            }
            #expect(try run("/bin/mount", ["-o", "remount,ro", disk]).status == 0)
            var messages: [String] = []
            do {
                let store = try AlertStore(path: path) { messages.append($0) }
                #expect(throws: StoreError.self) { try store.record(self.alert("cannot be written")) }
            } catch {
                #expect((error as? StoreError)?.cause == .unavailable, "\(error)")
            }
            #expect(!messages.contains { $0.contains("moved it to") }, "\(messages)")
            #expect(try run("/bin/mount", ["-o", "remount,rw", disk]).status == 0)
            #expect(try AlertStore(path: path) { Issue.record("unexpected: \($0)") }.seenNotices() == ["n-ro"])
        }
    }

    @Test func anotherProgramsDatabaseIsMovedAsideNotAdopted() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/alerts.db"
        #expect(try run("/usr/bin/python3", ["-c", "import sqlite3; c = sqlite3.connect('\(path)'); c.execute('CREATE TABLE songs (title TEXT)'); c.execute(\"INSERT INTO songs VALUES ('mine')\"); c.commit()"]).status == 0)
        var messages: [String] = []
        let store = try AlertStore(path: path) { messages.append($0) }
        #expect(messages.count == 1 && messages[0].contains("not a ccrelay database"))
        #expect(try store.badge().count == 0)
        let aside = try #require(try FileManager.default.contentsOfDirectory(atPath: directory).first { $0.contains("broken") })
        let check = try run("/usr/bin/python3", ["-c", "import sqlite3; print(sqlite3.connect('\(directory)/\(aside)').execute('SELECT title FROM songs').fetchone()[0])"])
        #expect(check.standardOutput == "mine\n", "the other program's file is untouched")
    }

    @Test func valuesReadBackAreBoundedLikeNetworkInput() throws {
        let path = directory + "/alerts.db"
        do {
            let store = try AlertStore(path: path) { Issue.record("unexpected: \($0)") }
            try store.record(alert("from the future"))
            try store.record(alert("from nowhere"))
        }
        let tamper = "import sqlite3; c = sqlite3.connect('\(path)'); c.execute('UPDATE alerts SET posted_at = 1e300 WHERE id = 1'); c.execute(\"UPDATE alerts SET posted_at = -1e300, acknowledged_at = 1e308, title = '\(String(repeating: "长", count: 9000))' WHERE id = 2\"); c.commit()"
        #expect(try run("/usr/bin/python3", ["-c", tamper]).status == 0)
        let entries = try AlertStore(path: path) { Issue.record("unexpected: \($0)") }.alerts(limit: 10)
        #expect(entries.map(\.postedAt) == [0, 0])
        #expect(entries[0].acknowledgedAt == nil)
        #expect(entries[0].title.count == 4_000)
    }

    @Test(arguments: [
        ("deadline", 1e300), ("deadline", Double.infinity), ("deadline", Double.nan), ("seq", -1), ("interval", 0),
        ("timeout", 1e9), ("token", 0),
    ])
    func aDamagedSavedSessionIsRefused(field: String, value: Double) {
        let now = 1_800_000_000.0
        var snapshot = SessionSnapshot(
            server: "https://s/", account: "a", token: "0123456789abcdef0123", ip: "10.0.0.1", interval: 60, timeout: 180,
            seq: 3, deadline: now + 100)
        #expect(snapshot.problem(now: now) == nil)
        switch field {
        case "deadline": snapshot.deadline = value
        case "seq": snapshot.seq = UInt64(bitPattern: Int64(value))
        case "interval": snapshot.interval = Int(value)
        case "timeout": snapshot.timeout = Int(value)
        default: snapshot.token = "0123456789abcdef\r\nX-Injected: 1"
        }
        #expect(snapshot.problem(now: now) != nil, "\(field) = \(value)")
    }
}
