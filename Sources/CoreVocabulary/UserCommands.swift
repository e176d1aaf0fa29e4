/// The commands an alert or a status sentence tells the user to run, as
/// this daemon's user runs them: `ccrelay setup` on a desktop; for the
/// system service (no keyring, its files root's to change) `sudo ccrelay
/// --system setup`, `ccrelay --system login`, and its password saved by
/// setup into its password file. The texts (in every language) name the
/// desktop's commands; `rewrite` puts this daemon's in their place.
public struct UserCommands: Sendable, Hashable {
    /// nil: the desktop's user daemon; else the system service (`""` the main one, or an instance's name).
    public var systemInstance: String?

    public init(systemInstance: String? = nil) { self.systemInstance = systemInstance }

    /// The desktop's commands.
    public static let desktop = UserCommands()

    /// `text` with the desktop's commands replaced by this daemon's.
    public func rewrite(_ text: String) -> String {
        guard let systemInstance else { return text }
        let system = "--system" + (systemInstance.isEmpty ? "" : "=" + systemInstance)
        // Longest first: a command that starts another is replaced whole.
        let replacements = [
            ("ccrelay login --save-password", "sudo ccrelay \(system) setup --edit"),
            ("ccrelay setup", "sudo ccrelay \(system) setup"),
            ("ccrelay relay test", "sudo ccrelay \(system) relay test"),
            ("ccrelay login", "ccrelay \(system) login"),
            ("ccrelay history", "ccrelay \(system) history"),
            ("ccrelay timeline", "ccrelay \(system) timeline"),
        ]
        var result = ""
        var rest = Substring(text)
        outer: while !rest.isEmpty {
            for (desktop, own) in replacements where rest.hasPrefix(desktop) {
                let after = rest.dropFirst(desktop.count)
                // A whole command, not the start of a longer word.
                if let next = after.first, next.isLetter || next == "-" { continue }
                result += own
                rest = after
                continue outer
            }
            result.append(rest.removeFirst())
        }
        return result
    }
}
