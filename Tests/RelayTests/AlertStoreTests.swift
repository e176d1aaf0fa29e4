import Foundation
import Relay
import TestSupport
import Testing

/// alerts.db: permissions, durability of seen notices, recovery from a broken file.
@Suite struct AlertStoreTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-store-\(UUID().uuidString)").path

    @Test func seenNoticesSurviveReopeningAndFilesArePrivate() throws {
        let path = directory + "/state/ccrelay/alerts.db"
        do {
            let store = try AlertStore(path: path) { Issue.record("unexpected: \($0)") }
            try store.markNoticeSeen("n-1")
            try store.markNoticeSeen("n-1")
            try store.markNoticeSeen("维护-2")
        }
        let reopened = try AlertStore(path: path) { Issue.record("unexpected: \($0)") }
        #expect(reopened.seenNotices() == ["n-1", "维护-2"])
        let file = try FileManager.default.attributesOfItem(atPath: path)
        let folder = try FileManager.default.attributesOfItem(atPath: directory + "/state/ccrelay")
        #expect((file[.posixPermissions] as? Int) == 0o600)
        #expect((folder[.posixPermissions] as? Int) == 0o700)
    }

    @Test func aBrokenOrForeignFileIsMovedAsideAndAFreshOneMade() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for (name, content) in [("garbage.db", Data("this is not a database at all, just text".utf8))] {
            let path = directory + "/" + name
            try content.write(to: URL(fileURLWithPath: path))
            let messages = LockedMessages()
            let store = try AlertStore(path: path) { messages.append($0) }
            #expect(store.seenNotices().isEmpty)
            try store.markNoticeSeen("n")
            #expect(messages.all.count == 1 && messages.all[0].contains("moved it to"))
            let aside = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix(name + ".broken-") }
            #expect(aside.count == 1)
        }
        // A SQLite file of another program is not touched either.
        let foreign = directory + "/foreign.db"
        let made = try run("/usr/bin/python3", ["-c", "import sqlite3; c=sqlite3.connect('\(foreign)'); c.execute('create table t(x)'); c.execute('pragma application_id=42'); c.commit()"])
        #expect(made.status == 0, "\(made.standardError)")
        let messages = LockedMessages()
        _ = try AlertStore(path: foreign) { messages.append($0) }
        #expect(messages.all.first?.contains("not a ccrelay database") == true)
    }
}

final class LockedMessages: @unchecked Sendable {
    // Guard: `lock`.
    private let lock = NSLock()
    private var messages: [String] = []
    func append(_ message: String) { lock.withLock { messages.append(message) } }
    var all: [String] { lock.withLock { messages } }
}
