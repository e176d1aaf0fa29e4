import CCRelayCore
import Foundation
import Testing

/// The Srun (深澜) examples users copy (issue 32): the commented one in
/// packaging/ccrelay.conf.example and docs/srun.md's parse as they say.
@Suite struct SrunExampleTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func parse(_ text: String) -> ConfigurationParser.Result {
        ConfigurationParser.parse(text, file: "/home/s/.config/ccrelay/ccrelay.conf", home: "/home/s", localize: .english)
    }

    @Test func thePackagedExamplesCommentedSrunBlockParses() throws {
        let example = try String(contentsOf: Self.root.appendingPathComponent("packaging/ccrelay.conf.example"), encoding: .utf8)
        let start = try #require(example.range(of: "; [server]\n; protocol = srun"))
        let block = example[start.lowerBound...].split(separator: "\n", omittingEmptySubsequences: false).prefix { $0.hasPrefix("; ") }
            .map { $0.dropFirst(2) }.joined(separator: "\n")
        let result = Self.parse(block)
        #expect(result.errors.isEmpty, "\(result.errors)")
        let configuration = try #require(result.configuration)
        #expect(configuration.serverProtocol == .srun && configuration.serverURL == "http://10.0.0.55/" && configuration.user == "2024000001")
        #expect(configuration.srun.acID == nil && configuration.srun.domain == "@cmcc" && configuration.srun.digest == .hmac
                && configuration.srun.poll == 60 && configuration.srun.logout == .portal)
        #expect(result.warnings.contains { $0.message.contains("plain http") }, "the warning the example speaks of")
    }

    @Test func theSrunPagesExampleParses() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("docs/srun.md"), encoding: .utf8)
        let section = try #require(readme.range(of: "## Srun (深澜) portals"))
        let open = try #require(readme.range(of: "```ini\n", range: section.upperBound..<readme.endIndex))
        let close = try #require(readme.range(of: "```", range: open.upperBound..<readme.endIndex))
        let result = Self.parse(String(readme[open.upperBound..<close.lowerBound]))
        #expect(result.errors.isEmpty, "\(result.errors)")
        #expect(result.configuration?.serverProtocol == .srun && result.configuration?.srun.domain == "@cmcc", "\(result)")
    }
}
