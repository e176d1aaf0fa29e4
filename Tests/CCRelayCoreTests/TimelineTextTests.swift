import CCRelayCore
import Testing

/// The timeline's states and causes read back in the user's language (issue
/// 33.2), the recorded words (a code, a reason, an interface) kept.
@Suite struct TimelineTextTests {
    @Test func causesAndStatesAreTranslatedWithTheirRecordedWords() throws {
        let chinese = try POFile(language: "zh_CN").localizer
        #expect(TimelineText.cause("the server ended the session (kicked)", localize: chinese) == "服务器结束了会话（kicked）")
        #expect(TimelineText.cause("login: granted", localize: chinese) == "登录：成功")
        #expect(TimelineText.cause("login: bad-credentials", localize: chinese) == "登录：bad-credentials")
        #expect(TimelineText.cause("the network went down: wlan0's link went down (netlink)", localize: chinese)
                == "网络断开：wlan0 的链路断开了（netlink）")
        #expect(TimelineText.cause("the network went down", localize: chinese) == "网络断开")
        #expect(TimelineText.cause("something new", localize: chinese) == "something new", "an unknown cause stays as recorded")
        #expect(TimelineText.state("logged-out", localize: chinese) == "已注销")
        #expect(TimelineText.state("online", localize: .english) == "online", "English keeps the wire names")
    }

    @Test func everyProblemCodeHasATranslatedSentence() throws {
        let chinese = try POFile(language: "zh_CN").localizer
        for code in ProblemReport.codes {
            let english = try #require(ProblemText.sentence(code, localize: .english))
            #expect(ProblemText.localized("the daemon's words", code: code, localize: chinese) != "the daemon's words", "\(code): \(english)")
        }
        #expect(ProblemText.localized("the daemon's words", code: "timeout", localize: .english) == "the daemon's words")
    }
}
