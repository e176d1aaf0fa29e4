@testable import CCProtocol
import Foundation
import Testing

/// A NUL in a notice (issue 31.14) ended its text in the journal and every
/// copy: it is shown as the replacement character, the rest kept.
struct NoticeTextTests {
    @Test func aNULIsShownAndWhatFollowsItIsKept() throws {
        let json = Data(#"{"id":"n-1","title":"停电\u0000通知","body":"今晚\u0000 23:00 维护"}"#.utf8)
        let notice = try JSONDecoder().decode(Notice.self, from: json)
        #expect(notice.title == "停电\u{FFFD}通知" && notice.body == "今晚\u{FFFD} 23:00 维护")
    }
}
