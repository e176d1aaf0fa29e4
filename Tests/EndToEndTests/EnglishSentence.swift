import Foundation

/// Finds English that reaches a Chinese user (issue 33.2): a run of three
/// or more English words in a line. File names, paths, URLs, options, codes
/// and anything with a digit, a dash, a dot or a slash inside are no words;
/// the names in `allowed` (commands, programs, protocols) break a run as a
/// Chinese character does, so "ccrelay config check" passes and "the daemon
/// is not running" does not.
enum EnglishSentence {
    static let allowed: Set<String> = [
        "ccrelay", "CC", "Relay", "sudo", "apt", "install", "systemctl", "user", "start", "enable", "now", "setup", "login",
        "logout", "status", "history", "timeline", "badge", "clear", "show", "config", "check", "path", "relay", "test", "daemon",
        "doctor", "demo", "completions", "bash", "zsh", "fish", "dunst", "gnome", "KWallet", "Secret", "Service", "NetworkManager",
        "GeoClue", "Srun", "HTTP", "HTTPS", "SMTP", "TLS", "JSON", "PEM", "CA", "URL", "ok", "warn", "fail", "netlink", "kicked",
        "journalctl", "edit", "TARGET", "forward", "ntfy", "gotify", "webhook", "bark", "serverchan", "xdg", "open",
    ]

    /// Messages of other programs that ours quote (libdbus's, libcurl's), allowed as they are.
    static let quoted = ["Failed to connect to socket", "Failed to connect to", "Couldn't connect to server"]

    /// The first run of English words in `text`, or nil.
    static func find(in text: String) -> String? {
        for line in text.split(separator: "\n") {
            var cleaned = String(line)
            for phrase in quoted { cleaned = cleaned.replacingOccurrences(of: phrase, with: "·") }
            // Chinese characters and punctuation end a run: "s、m、h 或 d" is no sentence.
            for segment in cleaned.split(whereSeparator: { !$0.isASCII }) {
                var run: [String] = []
                let tokens = segment.split { $0 == " " || $0 == "(" || $0 == ")" || $0 == "\"" || $0 == "'" }
                for token in tokens.map(String.init) + [""] {
                    let word = token.trimmingCharacters(in: CharacterSet(charactersIn: ",.;:!?"))
                    if !word.isEmpty, word.allSatisfy({ $0.isASCII && $0.isLetter }), !allowed.contains(word) {
                        run.append(word)
                        continue
                    }
                    if run.count >= 3 { return run.joined(separator: " ") + "  ← " + line }
                    run = []
                }
            }
        }
        return nil
    }
}
