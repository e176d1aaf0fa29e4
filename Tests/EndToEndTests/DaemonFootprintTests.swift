import Foundation
import Testing
import TestSupport

/// The daemon calls nothing in Foundation or FoundationEssentials (their JSON
/// codec alone cost it 5 MB of code and 2.4 MiB of RSS): CC/1 is written and
/// read by the core's own JSON. Read from the built program's undefined
/// symbols; the CLI, which does use FoundationEssentials, shows the check sees it.
@Suite struct DaemonFootprintTests {
    func foundationSymbols(of program: String) throws -> [String] {
        let path = buildProductsDirectory.appendingPathComponent(program).path
        let listed = try run("/usr/bin/nm", ["--undefined-only", path])
        try #require(listed.status == 0, "nm \(path): \(listed.standardError)")
        // Swift's mangling names a module by its length and name: $s20FoundationEssentials…, $s10Foundation…
        return listed.standardOutput.split(separator: "\n").map(String.init)
            .filter { $0.contains("$s20FoundationEssentials") || $0.contains("$s10Foundation") }
    }

    @Test func theDaemonUsesNoFoundation() throws {
        #expect(try foundationSymbols(of: "ccrelay").count > 0, "the check finds the CLI's use of FoundationEssentials")
        let used = try foundationSymbols(of: "ccrelay-daemon")
        #expect(used.isEmpty, "ccrelay-daemon calls Foundation: \(used.prefix(5))")
    }
}
