@testable import CCRelayCore
import CoreVocabulary
import Testing

/// `ConfigurationEditor`, setup's writer: it changes only the keys it is
/// given, keeps every other line, and any value either reads back through
/// the daemon's parser exactly as given or is refused.
@Suite struct ConfigurationEditorTests {
    let file = """
        # mine
        [server]
        url = https://cc.example/   ; the campus
        interface = wlan0

        # location stays off
        [location]
        mode = off
        [keepalive]
        unknown-key = 1
        """

    @Test func aKeyIsChangedInPlaceAndEveryOtherLineKept() {
        var editor = ConfigurationEditor(file)
        editor.set("server", "url", to: "https://other.example/")
        #expect(editor.text == file.replacing("url = https://cc.example/   ; the campus", with: "url = https://other.example/") + "\n")
    }

    @Test func aMissingKeyGoesAfterTheGroupsLastSettingAndAMissingGroupAtTheEnd() {
        var editor = ConfigurationEditor(file)
        editor.set("server", "ca-file", to: "/etc/ca.pem")
        editor.set("auth", "certificate", to: "/home/s/cert.pem")
        #expect(editor.lines[1...4] == ["[server]", "url = https://cc.example/   ; the campus", "interface = wlan0", "ca-file = /etc/ca.pem"])
        #expect(editor.lines[5...7] == ["", "# location stays off", "[location]"], "the comment stays with the next group")
        #expect(editor.lines.suffix(3) == ["", "[auth]", "certificate = /home/s/cert.pem"])
    }

    @Test func repeatsAreFoldedRemovedAndRepeatableKeysAdded() {
        var editor = ConfigurationEditor("[auth]\nkey = /a\nkey = /b\n[relay]\nntfy = https://n.example/t\n")
        editor.set("auth", "key", to: "/c")
        #expect(editor.text == "[auth]\nkey = /c\n[relay]\nntfy = https://n.example/t\n")
        editor.add("relay", "ntfy", "https://n.example/t")
        editor.add("relay", "webhook", "https://h.example/x")
        #expect(editor.value("relay", "webhook") == "https://h.example/x")
        #expect(editor.text.components(separatedBy: "ntfy =").count == 2, "the same target is not added twice")
        editor.remove("auth", "key")
        #expect(editor.value("auth", "key") == nil)
        #expect(editor.text == "[auth]\n[relay]\nntfy = https://n.example/t\nwebhook = https://h.example/x\n")
    }

    @Test(arguments: ["lo\n[relay]", "a\rb", "tab\there", " lead", "trail ", "#x", ";x", "/a #b", "/a ;b", "", "nul\u{0}", "line\u{2028}sep"])
    func valuesTheFileCannotHoldAreRefused(value: String) {
        #expect(ConfigurationEditor.problem(with: value, localize: .english) != nil)
    }

    /// The property: any value is refused, or reads back unchanged — as a
    /// path (kept verbatim by the parser) and inside a URL, from a file with
    /// the user's other lines around it. 5,000 values over an alphabet of
    /// everything that matters to the format.
    @Test func everyValueEitherRoundTripsThroughTheParserOrIsRefused() {
        let alphabet: [Character] = ["a", "Z", "0", " ", "\t", "\n", "\r", "\r\n", "#", ";", "=", "[", "]", "~", "/", ".", "é",
                                     "证", "书", "\u{0}", "\u{7F}", "\u{85}", "\u{2028}", "\u{FEFF}", "\"", "\\", "%", "😀"]
        var generator = SplitMix64(seed: 20)
        var refused = 0
        for _ in 0..<5_000 {
            let length = Int(generator.next() % 12)
            let tail = String((0..<length).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
            let path = "/home/s/" + tail
            // A URL holds no space and no fragment (the parser's rules for a URL); everything else goes in as drawn.
            let url = "https://cc.example/" + tail.filter { $0 != " " && $0 != "#" }
            guard ConfigurationEditor.problem(with: path, localize: .english) == nil, ConfigurationEditor.problem(with: url, localize: .english) == nil else {
                refused += 1
                continue
            }
            var editor = ConfigurationEditor(file)
            editor.set("auth", "certificate", to: path)
            editor.set("server", "url", to: url)
            let parsed = ConfigurationParser.parse(editor.text, file: "ccrelay.conf", home: "/home/s", localize: .english)
            #expect(parsed.configuration?.certificate == path, "\(tail.debugDescription): \(parsed.errors)")
            #expect(parsed.configuration?.serverURL == url, "\(tail.debugDescription): \(parsed.errors)")
            #expect(parsed.configuration?.locationMode == .off)
        }
        #expect(refused > 250 && refused < 4_750, "both sides are exercised: \(refused) refused")
    }
}
