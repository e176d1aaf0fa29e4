import Foundation

/// A real gnome-keyring-daemon (secrets component only) on a private bus,
/// with a fresh, unlocked login keyring in a throwaway home.
public final class GnomeKeyring: Sendable {
    private let process: ChildProcess
    private let home: String

    public init(on bus: PrivateBus) async throws {
        home = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-keyring-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: home + "/run", withIntermediateDirectories: true)
        chmod(home + "/run", 0o700)
        try "keyring-test-password".write(toFile: home + "/unlock", atomically: true, encoding: .utf8)
        var environment = bus.environment
        environment["HOME"] = home
        environment["XDG_DATA_HOME"] = home + "/data"
        environment["XDG_RUNTIME_DIR"] = home + "/run"
        process = try ChildProcess(
            "/usr/bin/gnome-keyring-daemon", ["--unlock", "--components=secrets", "--foreground"],
            environment: environment, captureOutput: false, inputFile: home + "/unlock")
        guard try await bus.waitForName("org.freedesktop.secrets") else {
            throw TestSetupError("gnome-keyring-daemon did not start")
        }
    }

    deinit {
        process.stop()
        try? FileManager.default.removeItem(atPath: home)
    }
}
