import AlertJournal
import Foundation
import DesktopServices
import CCRelayCore
import CoreVocabulary
import TestSupport
import Testing

/// The built `ccrelay` binary as a user meets it: help everywhere, version,
/// usage errors with status 2 and a hint, status 3 without a daemon, the
/// journal commands without a daemon, and shell completions that work.
@Suite(.desktopBudget) struct CommandLineTests {
    let ccrelay = DaemonRig.ccrelay
    static let commands = ["daemon", "setup", "status", "show", "badge", "history", "login", "logout", "notify-test", "config", "relay",
                           "completions", "demo"]

    /// An environment with a private state directory and no session bus.
    func isolated() -> [String: String] {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-cli-\(UUID().uuidString)").path
        return ["XDG_STATE_HOME": state, "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/ccrelay-no-bus", "HOME": state]
    }

    @Test(arguments: commands)
    func everyCommandHasHelp(_ command: String) throws {
        for flag in ["--help", "-h"] {
            let result = try run(ccrelay, [command, flag], environment: isolated())
            #expect(result.status == 0)
            #expect(result.standardOutput.hasPrefix("Usage: ccrelay \(command)"), "\(result.standardOutput)")
            #expect(result.standardError.isEmpty)
        }
    }

    /// The help and the usage errors speak the user's language (LANG), as the alerts do.
    @Test(arguments: commands)
    func everyCommandsHelpIsTranslated(_ command: String) throws {
        for (language, usage, options) in [("zh_CN.UTF-8", "用法：ccrelay \(command)", "选项："), ("zh_TW.UTF-8", "用法：ccrelay \(command)", "選項：")] {
            let result = try run(ccrelay, [command, "--help"], environment: isolated().merging(["LANG": language, "LANGUAGE": ""]) { $1 })
            #expect(result.status == 0)
            #expect(result.standardOutput.hasPrefix(usage) && result.standardOutput.contains(options), "\(language): \(result.standardOutput)")
        }
    }

    @Test func theOverviewAndUsageErrorsAreTranslated() throws {
        let chinese = isolated().merging(["LANG": "zh_CN.UTF-8", "LANGUAGE": ""]) { $1 }
        let overview = try run(ccrelay, ["--help"], environment: chinese)
        #expect(overview.standardOutput.hasPrefix("用法：ccrelay [--system[=实例]] <命令> [选项]") && overview.standardOutput.contains("  history      按从新到旧列出已发出的提醒"),
                "\(overview.standardOutput)")
        let typo = try run(ccrelay, ["history", "--limt", "3"], environment: isolated().merging(["LANG": "zh_TW.UTF-8", "LANGUAGE": ""]) { $1 })
        #expect(typo.status == 2)
        #expect(typo.standardError == "ccrelay: history: 未知選項 “--limt”；你是不是想用 “--limit”？\n試試 “ccrelay history --help”。\n",
                "\(typo.standardError)")
        let english = try run(ccrelay, ["history", "--limt", "3"], environment: isolated().merging(["LANG": "C.UTF-8", "LANGUAGE": ""]) { $1 })
        #expect(english.standardError.contains("unknown option '--limt'; did you mean '--limit'?"), "\(english.standardError)")
    }

    @Test func versionHelpAndMistakes() throws {
        let version = try run(ccrelay, ["--version"])
        #expect(version.status == 0 && version.standardOutput.hasPrefix("ccrelay 0."))
        let help = try run(ccrelay, ["--help"])
        for command in Self.commands { #expect(help.standardOutput.contains("  \(command) ")) }
        let none = try run(ccrelay, [])
        #expect(none.status == 2 && none.standardError.contains("no command given"))
        let typo = try run(ccrelay, ["stauts"])
        #expect(typo.status == 2)
        #expect(typo.standardError.contains("did you mean 'status'?"))
        #expect(typo.standardOutput.isEmpty, "errors go to stderr")
        let option = try run(ccrelay, ["history", "--limt=3"], environment: isolated())
        #expect(option.status == 2)
        #expect(option.standardError.contains("did you mean '--limit'?") && option.standardError.contains("ccrelay history --help"))
        let value = try run(ccrelay, ["history", "--limit", "0"], environment: isolated())
        #expect(value.status == 2 && value.standardError.contains("--limit needs a number from 1 to 1000"))
        let kind = try run(ccrelay, ["history", "--kind", "loged-out"], environment: isolated())
        #expect(kind.status == 2 && kind.standardError.contains("did you mean 'logged-out'?"))
        let word = try run(ccrelay, ["badge", "claer"], environment: isolated())
        #expect(word.status == 2 && word.standardError.contains("did you mean 'clear'?"))
    }

    @Test func withoutADaemonStatusSaysSoAndTheJournalCommandsStillWork() throws {
        let environment = isolated()
        let status = try run(ccrelay, ["status", "--json"], environment: environment)
        #expect(status.status == 1, "no session bus at all is a failure, not 'not running'")
        #expect(status.standardError.contains("session bus"))
        let badge = try run(ccrelay, ["badge", "--json"], environment: environment)
        #expect(badge.status == 0, "\(badge.standardError)")
        #expect(badge.standardOutput == "{\"count\":0,\"urgent\":false}\n")
        let history = try run(ccrelay, ["history", "--json"], environment: environment)
        #expect(history.status == 0 && history.standardOutput == "[]\n")
        let clear = try run(ccrelay, ["badge", "clear"], environment: environment)
        #expect(clear.status == 0 && clear.standardOutput.contains("No unread alerts."))
        let state = try FileManager.default.attributesOfItem(atPath: environment["XDG_STATE_HOME"]! + "/ccrelay")
        #expect((state[.posixPermissions] as? Int) == 0o700)
    }

    @Test func colourOnlyOnATerminalAndNeverWithNoColor() throws {
        var environment = isolated()
        let store = try AlertStore(path: environment["XDG_STATE_HOME"]! + "/ccrelay/alerts.db") { _ in }
        try store.record(Alert(kind: .loggedOut, title: "登录已被注销，请重新登录", body: "", urgency: .critical))
        environment["TERM"] = "xterm"
        // script(1) gives the command a pseudo-terminal; the test runner itself may set NO_COLOR.
        let onTerminal = try run("/usr/bin/script", ["-qec", "env -u NO_COLOR \(ccrelay) history", "/dev/null"], environment: environment)
        #expect(onTerminal.standardOutput.contains("\u{1B}[31m"), "\(onTerminal.standardOutput)")
        environment["NO_COLOR"] = "1"
        let noColor = try run("/usr/bin/script", ["-qec", "\(ccrelay) history", "/dev/null"], environment: environment)
        #expect(noColor.standardOutput.contains("登录已被注销"))
        #expect(!noColor.standardOutput.contains("\u{1B}["))
        let piped = try run(ccrelay, ["history"], environment: isolated().merging(["XDG_STATE_HOME": environment["XDG_STATE_HOME"]!]) { $1 })
        #expect(piped.standardOutput.contains("登录已被注销") && !piped.standardOutput.contains("\u{1B}["))
    }

    @Test func statusWithABusButNoDaemonExitsThree() async throws {
        let bus = try PrivateBus()
        var environment = isolated()
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        let status = try run(ccrelay, ["status"], environment: environment)
        #expect(status.status == 3)
        #expect(status.standardError.contains("systemctl --user start ccrelay"))
        #expect(try run(ccrelay, ["logout"], environment: environment).status == 3)
    }

    /// Runs bash completion for the words typed and returns the candidates.
    func bashComplete(_ words: [String]) throws -> [String] {
        let script = try run(ccrelay, ["completions", "bash"]).standardOutput
        let quoted = words.map { "'\($0)'" }.joined(separator: " ")
        let program = script + "\nCOMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); _ccrelay; printf '%s\\n' \"${COMPREPLY[@]}\""
        let result = try run("/bin/bash", ["-c", program])
        #expect(result.status == 0, "\(result.standardError)")
        return result.standardOutput.split(separator: "\n").map(String.init)
    }

    @Test func bashCompletesCommandsOptionsAndValues() throws {
        #expect(try bashComplete(["ccrelay", "hi"]) == ["history"])
        #expect(try bashComplete(["ccrelay", "badge", ""]).contains("clear"))
        #expect(try bashComplete(["ccrelay", "status", "--w"]) == ["--watch"])
        #expect(try bashComplete(["ccrelay", "history", "--kind", "location-"]) ==
            ["location-denied", "location-off", "location-too-coarse"])
        #expect(try bashComplete(["ccrelay", "notify-test", "back"]) == ["back-online"])
        // The status bubble is never journaled: history offers no kind for it (issue 21).
        #expect(try bashComplete(["ccrelay", "history", "--kind", "sta"]).isEmpty)
        #expect(try run(ccrelay, ["history", "--kind", "status"], environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"]).status == 2)
    }

    @Test func zshAndFishScriptsParse() throws {
        let zsh = try run(ccrelay, ["completions", "zsh"]).standardOutput
        #expect(zsh.hasPrefix("#compdef ccrelay"))
        let zshCheck = try run("/usr/bin/zsh", ["-n", "-c", zsh])
        #expect(zshCheck.status == 0, "\(zshCheck.standardError)")
        let fish = try run(ccrelay, ["completions", "fish"]).standardOutput
        let fishCheck = try run("/usr/bin/fish", ["--no-execute", "-c", fish])
        #expect(fishCheck.status == 0, "\(fishCheck.standardError)")
        // fish itself completes from the generated script.
        let completed = try run("/usr/bin/fish", ["-c", fish + "\ncomplete -C 'ccrelay history --kind cred'"])
        #expect(completed.standardOutput.contains("credentials"), "\(completed.standardOutput) \(completed.standardError)")
        #expect(try run(ccrelay, ["completions", "tcsh"]).status == 2)
    }
}
