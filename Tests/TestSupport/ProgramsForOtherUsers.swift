import Foundation

/// The built programs, copied where a user the test made can run them
/// (issue 31, item 13). A checkout may lie where only its owner may enter
/// (`mktemp -d`, `/root`, a Debian 12 home: 0700); a test that runs
/// `ccrelay` as another user (`runuser`) cannot reach `.build/debug` there
/// (exit 126). This copies the programs and what they read beside them (the
/// catalogues, the icons) into a fresh 0755 folder under /tmp, and removes
/// it when released. The Swift runtime the debug programs link stays where
/// the toolchain is; `check(as:)` says so when the user cannot load it.
public final class ProgramsForOtherUsers: Sendable {
    /// The folder every user may read and enter.
    public let folder: String

    /// Copies `programs` (and `locale`, `icons` when the build has them) from
    /// the build products folder.
    public init(_ programs: [String] = ["ccrelay", "ccrelay-daemon"]) throws {
        folder = "/tmp/ccrelay-programs-\(UUID().uuidString)"
        let files = FileManager.default
        try files.createDirectory(atPath: folder, withIntermediateDirectories: false)
        chmod(folder, 0o755)
        let built = buildProductsDirectory.path
        // `make locale` links icons into the source tree: copy what a link points at. By cp in a
        // process of its own: a program this process opened for writing could be inherited by a child
        // another test spawns meanwhile, and running the copy would fail with ETXTBSY ("Text file busy").
        for name in programs + ["locale", "icons"] {
            let source = URL(fileURLWithPath: built + "/" + name).resolvingSymlinksInPath().path
            guard files.fileExists(atPath: source) || programs.contains(name) else { continue }
            let copied = try run("/bin/cp", ["-RL", source, folder + "/" + name])
            guard copied.status == 0 else { throw TestSetupError("cp \(source): \(copied.standardError)") }
        }
        let readable = try run("/bin/chmod", ["-R", "u+rwX,go+rX", folder])
        guard readable.status == 0 else { throw TestSetupError("chmod -R \(folder): \(readable.standardError)") }
    }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    /// The copy of `program`.
    public func path(_ program: String) -> String { folder + "/" + program }

    /// Runs `program --version` as `user`: a setup error that says why when the
    /// user cannot run it (the toolchain's runtime libraries unreadable to others, say).
    public func check(as user: String, _ program: String = "ccrelay") throws {
        let result = try run("/usr/sbin/runuser", ["-u", user, "--", path(program), "--version"])
        guard result.status == 0 else {
            throw TestSetupError("the user \(user) cannot run \(path(program)) (exit \(result.status)): \(result.standardError); "
                + "the debug build loads the Swift runtime from the toolchain, which must be readable by every user")
        }
    }
}
