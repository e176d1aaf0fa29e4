@testable import CCRelayCore
import Foundation
import Testing

/// The man pages are the reference (issue 35): ccrelay.conf(5) documents every
/// group and key of the parser's own table with its type, default, range and
/// a working example, and nothing else; the shipped example configuration
/// names the same groups and keys; ccrelay(1) lists every `last_error_code`.
@Suite struct ManPageReferenceTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    static func read(_ path: String) throws -> String {
        try String(contentsOfFile: root + "/" + path, encoding: .utf8)
    }

    /// roff's escapes that the pages use, undone: `\-` is `-`, fonts are dropped.
    static func plain(_ roff: some StringProtocol) -> String {
        var text = String(roff).replacingOccurrences(of: "\\-", with: "-")
        for font in ["\\fB", "\\fR", "\\fI", "\\fP"] { text = text.replacingOccurrences(of: font, with: "") }
        return text
    }

    /// A page's `.TP` entries under each `.SH` heading: heading → [tag → body].
    static func entries(_ page: String) -> [String: [String: String]] {
        var sections: [String: [String: String]] = [:]
        var heading = ""
        var tag: String?
        var body = ""
        var expectTag = false
        func close() {
            if let tag { sections[heading, default: [:]][tag, default: ""] += body }
            tag = nil
            body = ""
        }
        for line in page.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(".SH ") {
                close()
                heading = plain(line.dropFirst(4)).trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
            } else if line == ".TP" {
                close()
                expectTag = true
            } else if expectTag {
                expectTag = false
                let words = plain(line.hasPrefix(".B ") ? line.dropFirst(3) : line[...]).split(separator: " ")
                tag = words.first.map(String.init)
            } else {
                body += plain(line) + "\n"
            }
        }
        close()
        return sections
    }

    @Test func theConfigurationPageDocumentsEveryGroupAndKeyOfTheParser() throws {
        let sections = Self.entries(try Self.read("packaging/ccrelay.conf.5"))
        let documentedGroups = Set(sections.keys.filter { $0.hasPrefix("[") }.map { String($0.dropFirst().dropLast()) })
        #expect(documentedGroups == Set(ConfigurationParser.knownKeys.keys),
                "groups: the page has \(documentedGroups.sorted()), the parser \(ConfigurationParser.knownKeys.keys.sorted())")
        for (group, keys) in ConfigurationParser.knownKeys {
            let documented = sections["[\(group)]"] ?? [:]
            #expect(Set(documented.keys) == Set(keys), "[\(group)]: the page has \(documented.keys.sorted()), the parser \(keys.sorted())")
            for (key, body) in documented {
                for field in ["Type:", "Default:", "Example:"] {
                    #expect(body.contains(field), "[\(group)] \(key) says no \(field)")
                }
                let type = body.components(separatedBy: "Type:").last?.split(separator: ".").first ?? ""
                #expect(body.contains("Range:") || type.contains("boolean"), "[\(group)] \(key) says no Range:")
                // The example is a line the parser takes without a problem.
                let example = try #require(body.split(separator: "\n").last { $0.hasPrefix(".B \(key) = ") }, "[\(group)] \(key)'s example")
                let text = switch group {
                case "srun": "[server]\nprotocol = srun\nurl = https://portal.example/\n[auth]\nuser = u\n[srun]\n"
                case "auth": "[server]\nurl = https://cc.example/\n[auth]\n" + (key == "key" ? "certificate = /c/s.pem\n" : "")
                default: "[auth]\nuser = u\n[server]\nurl = https://cc.example/\n[\(group)]\n"
                }
                let result = ConfigurationParser.parse(text + example.dropFirst(3), file: "/c/ccrelay.conf", home: "/home/s", localize: .english)
                #expect(result.errors.isEmpty, "[\(group)] \(example): \(result.errors)")
            }
        }
    }

    @Test func theShippedExampleNamesEveryGroupAndKeyAndNoOther() throws {
        let example = try Self.read("packaging/ccrelay.conf.example")
        var group = ""
        var named: [String: Set<String>] = [:]
        for raw in example.split(separator: "\n") where !raw.hasPrefix("#") {
            let line = raw.hasPrefix("; ") ? raw.dropFirst(2) : raw[...]
            if line.hasPrefix("["), let end = line.firstIndex(of: "]") {
                group = String(line[line.index(after: line.startIndex)..<end])
                named[group, default: []].formUnion([])
            } else if let equals = line.range(of: " = "), !group.isEmpty,
                line[..<equals.lowerBound].allSatisfy({ $0.isLowercase || $0.isNumber || $0 == "-" }) {
                named[group, default: []].insert(String(line[..<equals.lowerBound]))
            }
        }
        #expect(Set(named.keys) == Set(ConfigurationParser.knownKeys.keys), "groups: \(named.keys.sorted())")
        for (group, keys) in ConfigurationParser.knownKeys {
            #expect(named[group] == Set(keys), "[\(group)]: the example has \((named[group] ?? []).sorted()), the parser \(keys.sorted())")
        }
    }

    @Test func ccrelaysPageListsEveryErrorCodeAndNoOther() throws {
        let sections = Self.entries(try Self.read("packaging/ccrelay.1"))
        let listed = Set((sections["ERROR CODES"] ?? [:]).keys)
        #expect(listed == Set(ProblemReport.codes), "the page lists \(listed.sorted()), ProblemCode has \(ProblemReport.codes.sorted())")
    }

    @Test func theDaemonsPageNamesEveryOptionTheDaemonReads() throws {
        let page = Self.plain(try Self.read("packaging/ccrelay-daemon.8"))
        let folder = Self.root + "/Sources/ccrelay-daemon"
        let sources = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".swift") }
            .map { try String(contentsOfFile: folder + "/" + $0, encoding: .utf8) }.joined()
        let regex = try NSRegularExpression(pattern: #""(--[a-z0-9-]+)""#)
        let options = Set(regex.matches(in: sources, range: NSRange(sources.startIndex..., in: sources)).compactMap {
            Range($0.range(at: 1), in: sources).map { String(sources[$0]) }
        })
        #expect(options.count >= 8, "\(options)")
        for option in options { #expect(page.contains(option), "ccrelay-daemon(8) does not name \(option)") }
    }
}
