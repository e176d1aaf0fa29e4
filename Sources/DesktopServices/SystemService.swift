import CoreVocabulary
import FileAccess
#if canImport(Glibc)
import Glibc
#endif

/// The daemon as a system service (`ccrelay-daemon --system`, the
/// `ccrelay.service` system unit): where it reads its configuration and
/// keeps its journal, honouring what systemd sets for the unit (so one
/// program serves every `ccrelay@.service` instance, and tests need no real
/// `/etc` or `/var/lib`), and the system user and group the package makes.
public enum SystemService {
    /// The unprivileged user the service runs as, and the group whose members may steer it.
    public static let user = "ccrelay"
    public static let group = SecretFileMode.serviceGroup

    /// `$CONFIGURATION_DIRECTORY/ccrelay.conf`, or `/etc/ccrelay/ccrelay.conf`;
    /// an instance of `ccrelay@.service` reads `INSTANCE.conf` there.
    public static func configurationPath(instance: String? = nil) -> String {
        (firstDirectory("CONFIGURATION_DIRECTORY") ?? "/etc/ccrelay") + "/\(instance ?? "ccrelay").conf"
    }

    /// `$STATE_DIRECTORY/alerts.db` (systemd gives each instance its own), or
    /// `/var/lib/ccrelay/alerts.db` (an instance's: `/var/lib/ccrelay/INSTANCE/alerts.db`).
    public static func storePath(instance: String? = nil) -> String {
        (firstDirectory("STATE_DIRECTORY") ?? "/var/lib/ccrelay" + (instance.map { "/" + $0 } ?? "")) + "/alerts.db"
    }

    /// Whether `name` can name an instance: it becomes the last element of
    /// its bus name, `io.github.ccrelay.CCRelay.NAME` (a letter or `_` first,
    /// then letters, digits, `_` and `-`; at most 32), and its configuration
    /// `NAME.conf` — so not `ccrelay`, the main service's.
    public static func isInstanceName(_ name: String) -> Bool {
        guard name != user else { return false }
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= 32 else { return false }
        func letter(_ byte: UInt8) -> Bool { (0x41...0x5a).contains(byte) || (0x61...0x7a).contains(byte) || byte == 0x5f }
        return letter(first) && bytes.allSatisfy { letter($0) || (0x30...0x39).contains($0) || $0 == 0x2d }
    }

    /// The bus name of the service, or of one instance of it.
    public static func busName(instance: String?) -> String { ControlNames.busName + (instance.map { "." + $0 } ?? "") }

    /// The first absolute directory in a systemd directory variable (it may list several, colon-separated).
    private static func firstDirectory(_ name: String) -> String? {
        guard let value = getenv(name).map({ String(cString: $0) }) else { return nil }
        return value.split(separator: ":").map(String.init).first { $0.hasPrefix("/") }
    }
}

/// A secret kept in a file rather than a keyring: a systemd credential
/// (`LoadCredential=`, in `$CREDENTIALS_DIRECTORY`) or a file the
/// configuration names. Read bounded, one line, never logged; a file others
/// may read is refused, saying the fix.
public enum SecretFile {
    /// The longest secret read (a password, not a document).
    public static let limit = 1024

    /// The credential `name` systemd passed to the service, when there is one.
    public static func credential(_ name: String) -> Result<String, SecretFileProblem>? {
        guard let directory = getenv("CREDENTIALS_DIRECTORY").map({ String(cString: $0) }), directory.hasPrefix("/") else { return nil }
        let path = directory + "/" + name
        guard access(path, F_OK) == 0 else { return nil }
        // systemd made the directory for this service alone: its modes are systemd's.
        return read(path, checkingMode: false)
    }

    /// The secret in `path`; refused when group or others may read it
    /// (unless it is `0640 root:ccrelay`, the service's group), when it is not
    /// a regular file, or when it is longer than `limit` (each refusal in the user's language).
    public static func read(_ path: String, checkingMode: Bool = true) -> Result<String, SecretFileProblem> {
        func refused(_ template: String, _ values: String...) -> Result<String, SecretFileProblem> {
            .failure(SecretFileProblem(TextTemplate.fill(template, values)))
        }
        if checkingMode, let problem = SecretFileMode.problem(path, localize: Localization.localizer) { return .failure(SecretFileProblem(problem)) }
        switch BoundedFile.read(path, limit: limit) {
        case .success(let bytes):
            guard let text = String(validating: bytes, as: UTF8.self) else { return refused(Localization.localize("%s is not UTF-8 text"), path) }
            let line = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            let secret = line.hasSuffix("\r") ? String(line.dropLast()) : line
            guard !secret.isEmpty else { return refused(Localization.localize("%s is empty"), path) }
            return .success(secret)
        case .failure(let problem):
            return refused(Localization.localize("cannot read %s: %s"), path, problem.sentence(Localization.localizer))
        }
    }
}

/// Why a secret file cannot be used: a sentence naming the file and the fix.
public struct SecretFileProblem: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
