import Foundation
import Testing

/// The catalogues say each concept in the one word the translators' glossary
/// gives it (resources/po/GLOSSARY.md, described in docs/architecture.md;
/// issue 33.2: "badge" was 角标 in one place, 未读标记 in another).
@Suite struct GlossaryTests {
    /// One row of the glossary's table of terms.
    struct Term {
        var english: String
        var words: [String: String]
        var forbidden: [String: [String]]
        var checked: Bool
    }

    static let languages = ["zh_CN", "zh_TW"]

    static func terms() throws -> [Term] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("resources/po/GLOSSARY.md"), encoding: .utf8)
        let table = text.components(separatedBy: "## The state words").first ?? text
        return table.split(separator: "\n").compactMap { line -> Term? in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            // | concept | English | zh_CN | zh_TW | not in zh_CN | not in zh_TW |: seven pieces around the bars.
            guard cells.count == 8, !cells[1].hasPrefix("---"), cells[1] != "concept" else { return nil }
            func backticked(_ cell: String) -> [String] {
                cell.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
            }
            return Term(english: cells[2], words: ["zh_CN": cells[3], "zh_TW": cells[4]],
                        forbidden: ["zh_CN": backticked(cells[5]), "zh_TW": backticked(cells[6])], checked: cells[1].contains("**checked**"))
        }
    }

    @Test func theGlossaryHasOneWordForEachConcept() throws {
        let terms = try Self.terms()
        #expect(terms.count >= 20)
        #expect(terms.contains { $0.english == "badge" && $0.words["zh_CN"] == "未读标记" && $0.forbidden["zh_CN"]?.contains("角标") == true })
    }

    @Test(arguments: languages)
    func noTranslationUsesAWordTheGlossaryForbids(_ language: String) throws {
        let catalogue = try POFile(language: language)
        for term in try Self.terms() {
            for pattern in term.forbidden[language] ?? [] {
                let expression = try NSRegularExpression(pattern: pattern)
                for (id, translation) in catalogue.translations where !id.isEmpty {
                    let range = NSRange(translation.startIndex..., in: translation)
                    #expect(expression.firstMatch(in: translation, range: range) == nil,
                            "\(language): “\(translation)” says \(pattern) where the glossary says \(term.words[language] ?? "?") (\(term.english))")
                }
            }
        }
    }

    /// A message whose English names a checked term (not as a command or
    /// option: `ccrelay daemon`, `--badge`) says the glossary's word for it.
    @Test(arguments: languages)
    func everyMessageOfACheckedTermSaysItsWord(_ language: String) throws {
        let catalogue = try POFile(language: language)
        for term in try Self.terms() where term.checked {
            guard let word = term.words[language] else { continue }
            let pattern = "(?<![\\w\\-\\[.])(?<!ccrelay )" + NSRegularExpression.escapedPattern(for: term.english) + "s?(?![\\w\\-\\]])"
            let expression = try NSRegularExpression(pattern: pattern, options: .caseInsensitive)
            for (id, translation) in catalogue.translations where !id.isEmpty {
                guard expression.firstMatch(in: id, range: NSRange(id.startIndex..., in: id)) != nil else { continue }
                #expect(translation.contains(word), "\(language): “\(id)” is translated “\(translation)”, without \(word) (\(term.english))")
            }
        }
    }
}
