@testable import ccrelay
import Foundation
import Testing

/// docs/contracts.md names every key `ccrelay status --json` prints (issue 35).
@Suite struct ContractsJSONTests {
    @Test func everyStatusJSONKeyIsNamedInTheContracts() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        let page = try String(contentsOfFile: root + "/docs/contracts.md", encoding: .utf8)
        let section = try #require(page.components(separatedBy: "\n## JSON keys\n").last?.components(separatedBy: "\n## ").first)
        let keys = StatusJSON.Keys.allCases.map(\.rawValue) + StatusJSON.AccountJSON.Keys.allCases.map(\.rawValue)
            + StatusJSON.RelayJSON.Keys.allCases.map(\.rawValue)
        for key in keys {
            #expect(section.contains("`\(key)`"), "docs/contracts.md, JSON keys: \(key)")
        }
    }
}
