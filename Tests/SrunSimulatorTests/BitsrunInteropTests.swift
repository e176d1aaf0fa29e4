import Foundation
import TestSupport
import Testing

/// The published `bitsrun` 3.7.1 (PyPI), unmodified, in a throwaway virtual
/// environment under `.build/`; it hard-wires http://10.0.0.55 and
/// http://www.bit.edu.cn and reaches ccsim only through `HTTP_PROXY`.
enum Bitsrun {
    static let version = "3.7.1"

    /// Why there is no `bitsrun`: pip could not fetch it (PyPI unreachable), or the machine is not set up.
    struct InstallFailure: Error, CustomStringConvertible {
        var offline: Bool
        var description: String
    }

    /// The installed `bitsrun` command, or why there is none.
    static let command: Result<String, InstallFailure> = install()

    /// Skipped only when PyPI cannot be reached, and never under CI; any other
    /// trouble (no python3-venv) makes the tests fail.
    static var shouldRun: Bool {
        guard case .failure(let failure) = command, failure.offline else { return true }
        return ProcessInfo.processInfo.environment["CI"] == "true"
    }

    private static func install() -> Result<String, InstallFailure> {
        // .build/<triple>/debug → .build
        var build = buildProductsDirectory
        while build.lastPathComponent != ".build" && build.path != "/" { build.deleteLastPathComponent() }
        let venv = build.appendingPathComponent("bitsrun-\(version)").path
        let bitsrun = venv + "/bin/bitsrun"
        if installedVersion(venv) == version { return .success(bitsrun) }
        do {
            _ = try run("/bin/rm", ["-rf", venv])
            let made = try run("/usr/bin/python3", ["-m", "venv", venv])
            guard made.status == 0 else {
                return .failure(InstallFailure(
                    offline: false, description: "python3 -m venv failed (is Debian's python3-venv installed?): \(made.standardError)"))
            }
            let pip = try run(venv + "/bin/pip", [
                "install", "--disable-pip-version-check", "--no-input", "--quiet", "--timeout", "20", "--retries", "1",
                "bitsrun==\(version)",
            ])
            guard pip.status == 0, installedVersion(venv) == version else {
                let reason = "PyPI cannot be reached (pip install bitsrun==\(version)): \(pip.standardError)"
                FileHandle.standardError.write(Data("BitsrunInteropTests: \(reason)\n".utf8))
                return .failure(InstallFailure(offline: true, description: reason))
            }
            return .success(bitsrun)
        } catch {
            return .failure(InstallFailure(offline: false, description: "cannot set up bitsrun: \(error)"))
        }
    }

    private static func installedVersion(_ venv: String) -> String? {
        guard FileManager.default.isExecutableFile(atPath: venv + "/bin/bitsrun"),
            let result = try? run(venv + "/bin/python", ["-c", "import importlib.metadata as m; print(m.version('bitsrun'))"]),
            result.status == 0
        else { return nil }
        return result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs `bitsrun arguments` with only the proxy pointed at `sim` (and no configuration of the user's).
    static func invoke(_ arguments: [String], through sim: CCSimProcess) throws -> CommandResult {
        let bitsrun = try command.get()
        let proxy = String(sim.url.dropLast())
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("bitsrun-home-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        var environment = ["HTTP_PROXY": proxy, "http_proxy": proxy, "HOME": home, "XDG_CONFIG_HOME": home + "/.config",
                           "PYTHONDONTWRITEBYTECODE": "1", "COLUMNS": "100"]
        for name in ["HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"] { environment[name] = "" }
        return try run(bitsrun, arguments, environment: environment)
    }
}

@Suite(.enabled(if: Bitsrun.shouldRun, "PyPI cannot be reached to install bitsrun 3.7.1 (with CI=true this fails instead)"))
struct BitsrunInteropTests {
    /// A simulator at BIT's ac_id 8, which bitsrun must find through the captive redirect.
    private func sim() throws -> CCSimProcess { try srunSim(["--ac-id", "8"]) }

    @Test func logsInShowsItsStatusAndLogsOut() throws {
        let sim = try sim()
        let login = try Bitsrun.invoke(["login", "-u", account, "-p", password], through: sim)
        #expect(login.status == 0, "\(login.standardError)")
        #expect(login.standardOutput.contains("bitsrun: \(account) (127.0.0.1) logged in"), "\(login.standardOutput)")
        #expect(try sim.sessions().first?["account"] as? String == account)

        let online = try Bitsrun.invoke(["status"], through: sim)
        #expect(online.status == 0, "\(online.standardError)")
        #expect(online.standardOutput.contains("bitsrun: \(account) (127.0.0.1) is online"), "\(online.standardOutput)")
        #expect(online.standardOutput.contains("Traffic Used"))

        let logout = try Bitsrun.invoke(["logout", "-u", account, "-p", password], through: sim)
        #expect(logout.status == 0, "\(logout.standardError)")
        #expect(logout.standardOutput.contains("bitsrun: 127.0.0.1 logged out"), "\(logout.standardOutput)")
        #expect(try sim.sessions().isEmpty)

        let offline = try Bitsrun.invoke(["status"], through: sim)
        #expect(offline.standardOutput.contains("bitsrun: 127.0.0.1 is offline"), "\(offline.standardOutput)")
        // It went through the proxy to both hard-wired hosts.
        let hosts = Set((try sim.control("GET", "requests") as? [[String: Any]] ?? []).compactMap { $0["host"] as? String })
        #expect(hosts == ["10.0.0.55", "www.bit.edu.cn"])
    }

    @Test func aWrongPasswordIsE2553() throws {
        let sim = try sim()
        let login = try Bitsrun.invoke(["login", "-u", account, "-p", "not the password"], through: sim)
        #expect(login.status == 1)
        #expect(login.standardError.contains("error: E2553: Password is error."), "\(login.standardError)")
        #expect(try sim.sessions().isEmpty)
    }

    @Test func anUnknownUserIsE2531() throws {
        let sim = try sim()
        let login = try Bitsrun.invoke(["login", "-u", "2099999999", "-p", password], through: sim)
        #expect(login.status == 1)
        #expect(login.standardError.contains("error: E2531: User not found."), "\(login.standardError)")
    }
}
