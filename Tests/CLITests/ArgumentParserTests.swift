@testable import ccrelay
import Testing

/// The hand-written parser, table-driven: option forms, `--`, unknown
/// options, typos, and every subcommand's table entry.
@Suite struct ArgumentParserTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var flags: Set<String> = []
        var values: [String: String] = [:]
        var positionals: [String] = []
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let accepted: [Case] = [
        Case(arguments: []),
        Case(arguments: ["--json"], flags: ["json"]),
        Case(arguments: ["--limit=5"], values: ["limit": "5"]),
        Case(arguments: ["--limit", "5"], values: ["limit": "5"]),
        Case(arguments: ["--limit="], values: ["limit": ""]),
        Case(arguments: ["--kind", "--json"], values: ["kind": "--json"]),
        Case(arguments: ["-h"], flags: ["help"]),
        Case(arguments: ["--help"], flags: ["help"]),
        Case(arguments: ["clear", "--json"], flags: ["json"], positionals: ["clear"]),
        Case(arguments: ["--", "--json", "-h"], positionals: ["--json", "-h"]),
        Case(arguments: ["-"], positionals: ["-"]),
        Case(arguments: ["--limit=a=b"], values: ["limit": "a=b"]),
        Case(arguments: ["--limit", "1", "--limit", "2"], values: ["limit": "2"]),
    ]

    @Test(arguments: accepted)
    func optionForms(_ example: Case) throws {
        let parsed = try parseArguments(example.arguments, flags: ["json", "watch"], valued: ["limit", "kind"])
        #expect(parsed.flags == example.flags)
        #expect(parsed.values == example.values)
        #expect(parsed.positionals == example.positionals)
    }

    static let refused: [([String], String)] = [
        (["--jsno"], "unknown option '--jsno'; did you mean '--json'?"),
        (["--limt", "3"], "unknown option '--limt'; did you mean '--limit'?"),
        (["--frobnicate"], "unknown option '--frobnicate'"),
        (["-x"], "unknown option '-x'"),
        (["--json=yes"], "option '--json' takes no value"),
        (["--limit"], "option '--limit' needs a value"),
    ]

    @Test(arguments: refused)
    func unknownAndMalformedOptions(_ arguments: [String], _ message: String) {
        #expect(throws: UsageError.self) { try parseArguments(arguments, flags: ["json", "watch"], valued: ["limit", "kind"]) }
        do {
            _ = try parseArguments(arguments, flags: ["json", "watch"], valued: ["limit", "kind"])
        } catch {
            #expect(error.message == message)
        }
    }

    @Test func typosOfSubcommandsAreSuggestedAndNonsenseIsNot() {
        let names = CLI.subcommands.map(\.name)
        #expect(nearestMatch(to: "stauts", among: names) == "status")
        #expect(nearestMatch(to: "histroy", among: names) == "history")
        #expect(nearestMatch(to: "bagde", among: names) == "badge")
        #expect(nearestMatch(to: "logot", among: names) == "logout")
        #expect(nearestMatch(to: "xyzzy", among: names) == nil)
    }

    @Test func theTableCoversEveryCommandOfTheIssueWithAUsageThatNamesEachOption() {
        let names = Set(CLI.subcommands.map(\.name))
        #expect(names.isSuperset(of: ["daemon", "status", "badge", "history", "login", "logout", "notify-test", "config", "completions"]))
        #expect(names.count == CLI.subcommands.count, "no duplicate names")
        for command in CLI.subcommands {
            #expect(command.usage.hasPrefix("Usage: ccrelay \(command.name)"), "\(command.name)")
            #expect(command.usage.contains("-h, --help"), "\(command.name)")
            for option in command.flags + command.valued {
                #expect(command.usage.contains("--\(option)"), "\(command.name) --\(option) is documented")
                #expect(!CompletionsCommand.describe(option, in: command.usage).isEmpty, "\(command.name) --\(option) has a hint")
            }
            #expect(CLI.overview.contains(command.name))
        }
    }
}
