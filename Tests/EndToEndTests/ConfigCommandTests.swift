import Foundation
import TestSupport
import Testing

/// `ccrelay config check|path`, run as a user would.
@Suite struct ConfigCommandTests {
    static let ccrelay = buildProductsDirectory.appendingPathComponent("ccrelay").path

    func write(_ text: String, mode: mode_t = 0o600) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-\(UUID().uuidString).conf").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, mode)
        return path
    }

    @Test func aGoodFileIsOK() throws {
        let path = try write("[server]\nurl = https://cc.campus.example/\n[auth]\nuser = 20231234\n")
        let result = try run(Self.ccrelay, ["config", "check", "--config", path])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput == "\(path): ok\n")
    }

    @Test func aBadValueNamesFileAndLine() throws {
        let path = try write("[server]\nurl = https://x/\n[keepalive]\nwarn-before = later\nautorelogin = true\n")
        let result = try run(Self.ccrelay, ["config", "check", "--config=\(path)"])
        #expect(result.status == 1)
        #expect(result.standardError.contains("error: \(path):4: warn-before must be a number"))
        #expect(result.standardError.contains("warning: \(path):5: unknown key 'autorelogin'"))
        #expect(result.standardError.contains("did you mean 'auto-relogin'?"))
    }

    @Test func aFileOthersCanReadIsRefusedWithTheFix() throws {
        let path = try write("[server]\nurl = https://x/\n", mode: 0o644)
        let result = try run(Self.ccrelay, ["config", "check", "--config", path])
        #expect(result.status == 1)
        #expect(result.standardError.contains("chmod 600 \(path)"))
        let missing = try run(Self.ccrelay, ["config", "check", "--config", "/nonexistent/ccrelay.conf"])
        #expect(missing.status == 1 && missing.standardError.contains("/nonexistent/ccrelay.conf: cannot read"))
    }

    @Test func pathFollowsXDGConfigHome() throws {
        let result = try run(Self.ccrelay, ["config", "path"], environment: ["XDG_CONFIG_HOME": "/tmp/xdg-test"])
        #expect(result.standardOutput == "/tmp/xdg-test/ccrelay/ccrelay.conf\n")
        let typo = try run(Self.ccrelay, ["config", "chek"])
        #expect(typo.status == 2 && typo.standardError.contains("did you mean 'check'?"))
        #expect(try run(Self.ccrelay, ["config", "--help"]).standardOutput.contains("FILE:LINE"))
    }
}
