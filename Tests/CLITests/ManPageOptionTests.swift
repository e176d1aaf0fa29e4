@testable import ccrelay
import Foundation
import Testing

/// ccrelay(1) against the command table (issue 35): every command's every
/// option is named in its entry of COMMANDS (ArgumentParserTests checks each
/// `--help` names them), and the page's EXIT STATUS lists exactly the
/// statuses the program uses.
@Suite struct ManPageOptionTests {
    static let page: String = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        let roff = (try? String(contentsOfFile: root + "/packaging/ccrelay.1", encoding: .utf8)) ?? ""
        var text = roff.replacingOccurrences(of: "\\-", with: "-")
        for font in ["\\fB", "\\fR", "\\fI", "\\fP"] { text = text.replacingOccurrences(of: font, with: "") }
        return text
    }()

    /// The text of a page section, from `.SH NAME` to the next `.SH`.
    static func section(_ name: String) -> String {
        guard let start = page.range(of: "\n.SH \(name)\n") else { return "" }
        let rest = page[start.upperBound...]
        return String(rest[..<(rest.range(of: "\n.SH ")?.lowerBound ?? rest.endIndex)])
    }

    /// Each command's entries in COMMANDS (a command may have several, as config check and config path).
    static func entries() -> [String: String] {
        var found: [String: String] = [:]
        for entry in section("COMMANDS").components(separatedBy: ".TP\n").dropFirst() {
            let tag = entry.hasPrefix(".BR ") ? entry.dropFirst(4) : entry.hasPrefix(".B ") ? entry.dropFirst(3) : entry[...]
            guard let name = tag.split(whereSeparator: { $0 == " " || $0 == "\n" }).first else { continue }
            found[String(name), default: ""] += entry
        }
        return found
    }

    @Test(arguments: CLI.subcommands.map(\.name))
    func everyOptionIsNamedInTheManPage(_ name: String) throws {
        let command = try #require(CLI.subcommands.first { $0.name == name })
        let entry = try #require(Self.entries()[name], "ccrelay(1) has no entry for \(name)")
        for option in command.flags + command.valued where option != "help" {
            #expect(entry.contains("--\(option)"), "ccrelay(1), \(name): --\(option) is not named")
        }
    }

    @Test func theExitStatusesAreThePrograms() {
        let listed = Self.section("EXIT STATUS").components(separatedBy: ".TP\n").dropFirst()
            .compactMap { $0.split(separator: "\n").first.map { Int32($0.replacingOccurrences(of: ".B ", with: "")) } ?? nil }
        #expect(listed == [ExitStatus.ok, ExitStatus.failure, ExitStatus.usage, ExitStatus.daemonNotRunning], "\(listed)")
    }
}
