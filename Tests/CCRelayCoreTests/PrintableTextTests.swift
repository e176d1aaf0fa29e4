import CCRelayCore
import CoreVocabulary
import Testing

/// Text from the network on one log line (issue 31.2): a CR LF is one
/// Character in Swift, so splitting on "\n" kept it; `PrintableText` works
/// on scalars.
struct PrintableTextTests {
    @Test func everyLineBreakBecomesASpaceSoNoLineStartsWithTheServersText() {
        let hostile = "kicked\r\n<0>ccrelay: root login\rx\u{85}y\u{2028}z\u{2029}w\tv"
        let line = PrintableText.oneLine(hostile)
        #expect(!line.unicodeScalars.contains { [0x0A, 0x0D, 0x85, 0x2028, 0x2029, 0x09].contains($0.value) }, "\(line)")
        #expect(line == "kicked  <0>ccrelay: root login x y z w v")
    }

    @Test func controlsEscapesAndBidirectionalOverridesAreDropped() {
        let text = "a\u{1B}[31mred\u{7}\u{0}b\u{9B}c\u{202E}d\u{2066}e"
        #expect(PrintableText.oneLine(text) == "a[31mredbcde")
        #expect(PrintableText.oneLine("登录已被注销，请重新登录") == "登录已被注销，请重新登录", "other text is kept whole")
    }
}
