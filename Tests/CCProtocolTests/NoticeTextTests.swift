@testable import CCProtocol
import Testing

/// A NUL in a notice (issue 31.14) ended its text in the journal and every
/// copy: it is shown as the replacement character, the rest kept.
struct NoticeTextTests {
    @Test func aNULIsShownAndWhatFollowsItIsKept() throws {
        let reply = #"{"status":"online","notices":[{"id":"n-1","title":"停电\u0000通知","body":"今晚\u0000 23:00 维护"}]}"#
        guard case .accepted(let grant) = ReplyClassifier.classify(.keepAlive, status: 200, body: Array(reply.utf8), retryAfterHeader: nil)
        else {
            Issue.record("a keep-alive reply with a notice is accepted")
            return
        }
        let notice = try #require(grant.notices.first)
        #expect(notice.title == "停电\u{FFFD}通知" && notice.body == "今晚\u{FFFD} 23:00 维护")
    }
}
