import CCRelayCore
import CoreVocabulary
import Testing

/// Terminal columns, for the CLI's aligned tables in Chinese.
@Suite struct DisplayWidthTests {
    @Test func chineseCharactersTakeTwoColumnsAndMarksNone() {
        #expect(DisplayWidth.columns("server") == 6)
        #expect(DisplayWidth.columns("服务器") == 6)
        #expect(DisplayWidth.columns("上次错误") == 8)
        #expect(DisplayWidth.columns("伺服器：") == 8, "a full-width colon")
        #expect(DisplayWidth.columns("e\u{301}") == 1, "a combining accent adds nothing")
        #expect(DisplayWidth.columns("") == 0)
    }
}
