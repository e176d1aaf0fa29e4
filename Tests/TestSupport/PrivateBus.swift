import DBus
import DBusAsync
import DispatchLoop
import Foundation

/// A private `dbus-daemon --session` for one test, stopped when released.
public final class PrivateBus: Sendable {
    /// The address to connect to, as `DBUS_SESSION_BUS_ADDRESS` would hold it.
    public let address: String
    private let daemon: ChildProcess

    /// Starts a bus; with `socketPath`, at that fixed path (to restart a bus
    /// where clients expect it), else at a fresh one.
    public init(socketPath: String? = nil) throws {
        let listen = socketPath.map { "unix:path=\($0)" } ?? "unix:tmpdir=/tmp"
        if let socketPath { unlink(socketPath) }
        daemon = try ChildProcess(
            "/usr/bin/dbus-daemon", ["--session", "--nofork", "--print-address=1", "--address=\(listen)"])
        guard let line = daemon.readLine(), !line.isEmpty else {
            throw TestSetupError("dbus-daemon printed no address")
        }
        address = line
    }

    /// Stops the bus daemon, as when a session ends.
    public func stop() { daemon.stop() }

    /// The environment that points a child program at this bus as its session bus.
    public var environment: [String: String] {
        var env = ["DBUS_SESSION_BUS_ADDRESS": address]
        if let display = ProcessInfo.processInfo.environment["DISPLAY"] { env["DISPLAY"] = display }
        return env
    }

    /// A new connection to this bus on its own queue.
    public func connect(label: String = "test") throws -> Connection {
        try Connection(bus: .address(address), loop: DispatchScheduler(label: label))
    }

    /// Waits until `name` has an owner (or `timeout` passes); true when it has.
    public func waitForName(_ name: String, timeout: Duration = .seconds(20)) async throws -> Bool {
        let connection = try connect(label: "wait-for-name")
        defer { connection.loop.sync { connection.close() } }
        return await eventually(timeout: timeout) { (try? await connection.nameOwner(name)) != nil }
    }

    /// Waits until `name` has no owner.
    public func waitForNameToVanish(_ name: String, timeout: Duration = .seconds(20)) async throws -> Bool {
        let connection = try connect(label: "wait-for-vanish")
        defer { connection.loop.sync { connection.close() } }
        return await eventually(timeout: timeout) { (try? await connection.nameOwner(name)) == nil }
    }
}

/// A test fixture could not be set up (a missing program, a daemon that did not start).
public struct TestSetupError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
