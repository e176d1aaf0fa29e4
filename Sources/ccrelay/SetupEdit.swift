import CoreVocabulary
import CCRelayCore
import Forwarding
import DesktopServices

/// `setup --edit` (and `--force`) on a file with wrong lines: its answers
/// are still the defaults (read as written when the file does not parse),
/// and a line the daemon would ignore as a misspelt key is corrected (or
/// removed, when the right key is set too), each said with its line.
enum SetupEdit {
    /// `text` (the file at `file`) with its unknown keys mended, each mend said.
    static func mended(_ text: String, file: String) -> String {
        var editor = ConfigurationEditor(text)
        for mend in editor.mendUnknownKeys() {
            if mend.removed {
                Output.out(fill(localize("%s:%s: '%s' is no key of [%s] (ccrelay ignored it) and '%s' is set already; the line is removed."),
                                file, String(mend.line), mend.key, mend.group, mend.known))
            } else {
                Output.out(fill(localize("%s:%s: '%s' is no key of [%s]; it becomes '%s'."), file, String(mend.line), mend.key, mend.group, mend.known))
            }
        }
        return editor.text
    }

    /// The answers `text` holds as written (a path with `~/` in `home`), for a file whose errors keep it from parsing.
    static func answers(_ text: String, home: String) -> [String: String] {
        let editor = ConfigurationEditor(text)
        func path(_ value: String?) -> String? { value.map { $0.hasPrefix("~/") ? home + $0.dropFirst() : $0 } }
        var answers: [String: String] = [:]
        answers["server"] = editor.value("server", "url")
        answers["ca-file"] = path(editor.value("server", "ca-file"))
        answers["pinned-key"] = editor.value("server", "pinned-key")
        answers["interface"] = editor.value("server", "interface")
        answers["protocol"] = editor.value("server", "protocol")
        answers["certificate"] = path(editor.value("auth", "certificate"))
        answers["key"] = path(editor.value("auth", "key"))
        answers["user"] = editor.value("auth", "user")
        answers["ac-id"] = editor.value("srun", "ac-id")
        answers["domain"] = editor.value("srun", "domain")
        answers["relay-ca-file"] = path(editor.value("relay", "ca-file"))
        answers["relay"] = (PushServices.configurationKeys + ["forward"]).lazy.compactMap { editor.value("relay", $0) }.first
        return answers
    }
}
