import Foundation
import TestSupport
import Testing

/// A real `ccrelay daemon` with its simulator (over mutual TLS), a private
/// session bus and a notification server (dunst, or the test's own).
final class DaemonRig: Sendable {
    let bus: PrivateBus
    /// The private system bus, when the test gave one (kept alive with the rig).
    let systemBus: PrivateBus?
    /// The real notification server, unless the test brings its own (`withDunst: false`).
    let dunstServer: Dunst?
    var dunst: Dunst { dunstServer! }
    let sim: CCSimProcess
    let daemon: ChildProcess
    let logPath: String
    let configPath: String
    let environment: [String: String]

    init(extraConfig: String = "", simulator: [String] = ["--interval", "2", "--timeout", "8"], systemBus: PrivateBus? = nil,
         busSocket: String? = nil, certificate: (String, String)? = nil, useCertificate: Bool = true, withDunst: Bool = true,
         extraEnvironment: [String: String] = [:], serverURL: String? = nil, launcher: [String] = [],
         simulatorLauncher: [String] = [],
         beforeStart: (PrivateBus) async throws -> Void = { _ in }) async throws
    {
        bus = try PrivateBus(socketPath: busSocket)
        self.systemBus = systemBus
        dunstServer = withDunst ? try await Dunst(on: bus) : nil
        sim = try CCSimProcess(simulator, launcher: simulatorLauncher)
        try await beforeStart(bus)
        let pki = TestPKI.shared
        // A folder of its own: the daemon watches the configuration's folder,
        // and a busy one (/tmp itself) would wake it with every file written there.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-daemon-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let base = folder + "/rig"
        try """
            [server]
            url = \(serverURL ?? sim.url)
            ca-file = \(pki.caCertificate)
            [auth]
            \(useCertificate ? "certificate = \(certificate?.0 ?? pki.clientCertificate)" : "")
            \(useCertificate ? "key = \(certificate?.1 ?? pki.clientKey)" : "")
            [probe]
            ; Off unless a test turns it on: no test asks the internet (a later mode = auto wins).
            mode = off
            [keepalive]
            warn-before = 6
            \(extraConfig)
            """.write(toFile: base + ".conf", atomically: true, encoding: .utf8)
        chmod(base + ".conf", 0o600)
        logPath = base + ".log"
        configPath = base + ".conf"
        var environment = bus.environment
        // As systemd sets it: the path alone, no guid, so a restarted bus is the same address.
        if let busSocket { environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(busSocket)" }
        environment["XDG_STATE_HOME"] = base + "-state"
        // The system bus is a private one too, or none: never the machine's own.
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = systemBus?.address ?? "unix:path=/nonexistent/ccrelay-no-system-bus"
        self.environment = environment.merging(extraEnvironment) { $1 }
        let command = launcher + [DaemonRig.ccrelay, "daemon", "--config", base + ".conf"]
        daemon = try ChildProcess(
            command[0], Array(command.dropFirst()), environment: self.environment, outputFiles: (base + ".out", logPath))
    }

    static let ccrelay = buildProductsDirectory.appendingPathComponent("ccrelay").path

    /// Runs `ccrelay ARGUMENTS` in the rig's environment (bus, state directory).
    func cli(_ arguments: [String], input: String = "", environment extra: [String: String] = [:]) throws -> CommandResult {
        try run(DaemonRig.ccrelay, arguments, environment: environment.merging(extra) { $1 }, input: input)
    }

    /// Starts another daemon with the rig's configuration and environment.
    func startDaemon(logPath: String) throws -> ChildProcess {
        try ChildProcess(DaemonRig.ccrelay, ["daemon", "--config", configPath], environment: environment,
                         outputFiles: (logPath + ".out", logPath))
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    func acceptedReports() -> Int {
        ((try? sim.sessions()) ?? []).flatMap { ($0["reports"] as? [[String: Any]]) ?? [] }
            .filter { $0["accepted"] as? Bool == true }.count
    }

    /// Categories of the bubbles dunst has shown (closing them all).
    func shown() throws -> [String] { try dunst.closeAllAndReadHistory().map { $0.category } }
}
