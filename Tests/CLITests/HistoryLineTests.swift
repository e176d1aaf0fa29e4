@testable import ccrelay
import AlertJournal
import CCRelayCore
import Testing

/// `ccrelay history`'s one line per alert keeps the whole body (issue 33.7:
/// it showed the first line, and a logout's own sentence from the server is
/// the last).
@Suite struct HistoryLineTests {
    @Test func theServersSentenceIsOnTheLine() {
        let entry = JournalEntry(
            id: 1, kind: .credentials, title: "Certificate refused",
            body: "The campus server says your student certificate was revoked.\n\nThe server said: 证书已被吊销",
            urgency: .critical, postedAt: 1_800_000_000)
        let line = HistoryCommand.describe(entry)
        #expect(line.contains("— The campus server says your student certificate was revoked. The server said: 证书已被吊销"), "\(line)")
        #expect(!line.contains("\n"))
    }

    @Test func controlCharactersInABodyStayNeutralised() {
        let entry = JournalEntry(id: 2, kind: .notice, title: "Notice", body: "one\r\ntwo\u{1b}[2J", urgency: .normal, postedAt: 1_800_000_000)
        let line = HistoryCommand.describe(entry)
        #expect(!line.contains("\u{1b}[2J") && !line.contains("\r") && line.contains("one") && line.contains("two"), "\(line.debugDescription)")
    }
}
