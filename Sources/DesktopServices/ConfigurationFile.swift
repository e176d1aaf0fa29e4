import CoreVocabulary
import FileAccess
import CCRelayCore
#if canImport(Glibc)
import Glibc
#endif

/// Finds, checks and reads `ccrelay.conf`.
public enum ConfigurationFile {
    /// `$XDG_CONFIG_HOME/ccrelay/ccrelay.conf`, or `~/.config/ccrelay/ccrelay.conf`.
    public static func defaultPath() -> String {
        if let base = environment("XDG_CONFIG_HOME"), base.hasPrefix("/") { return base + "/ccrelay/ccrelay.conf" }
        return home() + "/.config/ccrelay/ccrelay.conf"
    }

    /// `$HOME`, or `/`.
    public static func home() -> String { environment("HOME") ?? "/" }

    private static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// Whether `path` is there but this user may not read it (or reach it).
    static func isDenied(_ path: String) -> Bool {
        if access(path, F_OK) != 0 { return errno == EACCES }
        return access(path, R_OK) != 0
    }

    /// Reads and parses `path`. A missing or unreadable file, one that is
    /// not a regular file (a directory, a FIFO: never opened in a way that
    /// could block), or one that group or others may read (but for 0640
    /// root:ccrelay, the system service's), is an error that names the file and the fix.
    public static func load(_ path: String) -> ConfigurationParser.Result {
        func failure(_ message: String) -> ConfigurationParser.Result {
            .init(configuration: nil, errors: [.init(file: path, line: 0, message: message)], warnings: [])
        }
        let bytes: [UInt8]
        switch BoundedFile.read(path, limit: 1 << 20) {
        case .success(let read): bytes = read
        case .failure(.missing(let reason)) where isDenied(path):
            // There, but not for this user (the system service's is the service's alone).
            return failure(TextTemplate.fill(Localization.localize(
                "cannot read the configuration: %s: only its owner may (the system service's: root and the service); check it as root: sudo ccrelay --system config check"),
                [reason]))
        case .failure(.missing(let reason)):
            return failure(TextTemplate.fill(Localization.localize("cannot read the configuration: %s; create it with ccrelay setup (man ccrelay.conf lists every key)"), [reason]))
        case .failure(let problem):
            return failure(TextTemplate.fill(Localization.localize("cannot read the configuration: %s"), [problem.sentence(Localization.localizer)]))
        }
        if let problem = SecretFileMode.problem(path, called: Localization.localize("the configuration"), localize: Localization.localizer) {
            return failure(problem)
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { return failure(Localization.localize("the configuration is not UTF-8 text")) }
        return ConfigurationParser.parse(text, file: path, home: home(), localize: Localization.localizer)
    }
}
