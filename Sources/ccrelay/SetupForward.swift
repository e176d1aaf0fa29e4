import CoreVocabulary
import CCRelayCore
import Forwarding
import DesktopServices
import EventLoop
import FileAccess
#if canImport(Glibc)
import Glibc
#endif

/// `ccrelay setup --forward URL` (or `--ntfy`, `--gotify`, `--webhook`, and
/// `--forward-ca-file`) on a machine set up already: adds the targets to the
/// configuration as it is and sends each target a test message. No trial
/// login: a daemon online keeps its session (on a campus that allows one
/// session per account, a second login would end it).
enum SetupForward {
    /// The options of this form (besides `--config` and the flags `--yes`, `--edit`, `--no-autostart`).
    static let options = PushServices.configurationKeys + ["forward", "forward-ca-file"]

    /// Whether the command line only adds forwarding to the configuration at `path`, which exists.
    static func applies(_ parsed: ParsedArguments, path: String) -> Bool {
        let given = Set(parsed.values.keys).subtracting(["config"])
        return !given.isEmpty && given.isSubset(of: options) && !parsed.has("force") && access(path, F_OK) == 0
    }

    static func run(_ parsed: ParsedArguments, path: String, account: (user: uid_t, group: gid_t)?) async -> Int32 {
        let daemonRuns = account == nil ? await SetupDaemon.runs() : false
        let old: String
        switch BoundedFile.read(path, limit: 1 << 20) {
        case .success(let bytes): old = String(decoding: bytes, as: UTF8.self)
        case .failure(let problem):
            Output.error(fill(localize("setup: cannot use %s: %s"), path, problem.sentence(Localization.localizer)))
            return ExitStatus.failure
        }
        var editor = ConfigurationEditor(old)
        for option in options {
            guard let value = parsed.values[option] else { continue }
            if let problem = ConfigurationEditor.problem(with: value, localize: Localization.localizer) { return usageError("setup", "--\(option) \(problem)") }
            if option != "forward-ca-file" { editor.add("relay", option, value) }
        }
        var caFile = parsed.values["forward-ca-file"].map(SetupCommand.absolute)
        if let file = caFile, let problem = SetupCommand.fileProblem(file) {
            Output.error(fill(localize("setup: --forward-ca-file %s: %s"), file, problem))
            return ExitStatus.failure
        }
        // What the targets add must read back without a new error (a mistyped scheme is named with its fix);
        // both readings in the user's language, so that an old error is told apart by its words.
        func errors(_ text: String) -> [ConfigurationIssue] {
            ConfigurationParser.parse(text, file: path, home: ConfigurationFile.home(), localize: Localization.localizer).errors
        }
        let before = Set(errors(old).map(\.message))
        let probe = caFile.map { file in var copy = editor; copy.set("relay", "ca-file", to: file); return copy.text } ?? editor.text
        let added = errors(probe).filter { !before.contains($0.message) }
        guard added.isEmpty else {
            for issue in added { Output.error("setup: \(issue)") }
            Output.error(localize("setup: nothing was written; fix the answers above and run ccrelay setup again"))
            return ExitStatus.failure
        }
        if let account, let file = caFile {
            guard let placed = SystemSetup.place(file, as: "relay-ca.pem", beside: path, account: account) else { return ExitStatus.failure }
            caFile = placed
        }
        if let caFile { editor.set("relay", "ca-file", to: caFile) }
        guard write(Array(editor.text.utf8), to: path, account: account) else { return ExitStatus.failure }
        Output.out(fill(localize("Wrote %s (forwarding only: no campus login was tried, so a session online stays online)."), path))
        SetupCommand.testForwarding(path)
        if account == nil {
            SetupDaemon.sayAfterForwarding(daemonRuns: daemonRuns)
        } else {
            Output.out(fill(localize("A running system service reads the new configuration by itself; its state: %s"),
                            "ccrelay --system" + (CLI.instance.map { "=" + $0 } ?? "") + " status"))
        }
        return ExitStatus.ok
    }

    /// Replaces the configuration in one step: the user's 0600, the system service's as `SystemSetup` writes it.
    private static func write(_ bytes: [UInt8], to path: String, account: (user: uid_t, group: gid_t)?) -> Bool {
        if let account { return SystemSetup.writeSecret(bytes, to: path, account: account) }
        let temporary = path + ".ccrelay-setup-\(getpid())"
        SetupCleanup.register(temporary)
        defer { SetupCleanup.forget(temporary) }
        guard SetupCommand.write(bytes, to: temporary, exclusive: true), rename(temporary, path) == 0 else {
            let reason = SystemError.reason(errno)  // read before gettext may change errno
            unlink(temporary)
            Output.error(fill(localize("setup: cannot write %s: %s"), path, reason))
            return false
        }
        return true
    }
}
