@testable import CCRelayCore
import Testing

/// `ConfigurationEditor.mendUnknownKeys()`, what `setup --edit` does to the
/// lines the daemon ignores (issue 33.4): a misspelt key is corrected, or
/// removed when the right one is set too; any other line stays.
@Suite struct ConfigurationMendingTests {
    @Test func aMisspeltKeyIsCorrectedOrRemovedAndEverythingElseStays() {
        var editor = ConfigurationEditor("""
            [server]
            url = https://cc.example/
            ca-fille = /etc/ca.pem   ; typed in a hurry
            [auth]
            certificate = /home/s/a.pem
            certficate = /home/s/b.pem
            [notifications]
            mystery = kept
            [newer]
            anything = kept
            """)
        let mends = editor.mendUnknownKeys()
        #expect(mends == [ConfigurationEditor.Mend(line: 3, group: "server", key: "ca-fille", known: "ca-file", removed: false),
                          ConfigurationEditor.Mend(line: 6, group: "auth", key: "certficate", known: "certificate", removed: true)])
        #expect(editor.text == """
            [server]
            url = https://cc.example/
            ca-file = /etc/ca.pem
            [auth]
            certificate = /home/s/a.pem
            [notifications]
            mystery = kept
            [newer]
            anything = kept

            """)
    }
}
