import CoreVocabulary
import CCRelayCore
import Foundation
import Testing

/// docs/contracts.md names every alert kind with its category hint, and every state (issue 35).
@Suite struct ContractsPageTests {
    @Test func everyAlertKindAndStateIsNamed() throws {
        let page = try DocumentationTests.read("docs/contracts.md")
        for kind in AlertKind.allCases {
            #expect(page.contains("| `\(kind.rawValue)` | `\(kind.category)` |"), "docs/contracts.md, Alert kinds: \(kind.rawValue)")
        }
        let states = try #require(page.components(separatedBy: "\n## States\n").last?.components(separatedBy: "\n## ").first)
        for state in DaemonState.allCases {
            #expect(states.contains("`\(state.rawValue)`"), "docs/contracts.md, States: \(state.rawValue)")
        }
    }
}

/// docs/contracts.md's D-Bus table names every method and property the daemon exports (issue 35).
@Suite struct ContractsDBusTests {
    @Test func everyExportedMemberIsInTheTable() throws {
        let page = try DocumentationTests.read("docs/contracts.md")
        let api = try DocumentationTests.read("Sources/DaemonShell/ControlAPI.swift")
        let methods = DocumentationTests.matches(#"\.init\("([A-Z][A-Za-z]+)"[,)]"#, in: api)
        let properties = DocumentationTests.matches(#"case [a-z]+ = "([A-Z][a-z]+)""#, in: try DocumentationTests.read("Sources/DesktopServices/ControlMessages.swift"))
        #expect(methods.count >= 7 && properties.count == 2, "\(methods) \(properties)")
        for method in methods { #expect(page.contains("| `\(method)("), "docs/contracts.md, The D-Bus API: \(method)") }
        for property in properties { #expect(page.contains("| `\(property)` | property"), "docs/contracts.md, The D-Bus API: \(property)") }
    }
}
