import DBus
import DBusAsync
import DispatchLoop
import Foundation

/// A private `dbus-daemon` for one test, stopped when released. It can
/// start (activate) only the services the test gives it — never the
/// machine's (/usr/share/dbus-1/services has a dunst, for one).
public final class PrivateBus: Sendable {
    /// The address to connect to, as `DBUS_SESSION_BUS_ADDRESS` would hold it.
    public let address: String
    private let daemon: ChildProcess
    private let folder: String

    /// Starts a bus; with `socketPath`, at that fixed path (to restart a bus
    /// where clients expect it), else at a fresh one. `services` are the
    /// activatable names and the command each starts (run by /bin/sh, with
    /// DBUS_SESSION_BUS_ADDRESS pointing at this bus). With `systemPolicy`
    /// (a policy file's path) it is a system bus as Debian's: closed by
    /// default, open as that file says (the services are then ignored).
    public init(socketPath: String? = nil, services: [String: String] = [:], systemPolicy: String? = nil) throws {
        let listen = socketPath.map { "unix:path=\($0)" } ?? "unix:tmpdir=/tmp"
        if let socketPath { unlink(socketPath) }
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-bus-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder + "/services", withIntermediateDirectories: true)
        for (name, command) in services {
            let exec = "/bin/sh -c \"DBUS_SESSION_BUS_ADDRESS=$DBUS_STARTER_ADDRESS exec \(command)\""
            try "[D-BUS Service]\nName=\(name)\nExec=\(exec)\n".write(
                toFile: folder + "/services/\(name).service", atomically: true, encoding: .utf8)
        }
        // A system bus: the default policy of Debian's system.conf (nobody owns a
        // name or calls a method unless a policy file says so), then the policy given.
        let policy = systemPolicy.map { file in
            """
              <policy context="default">
                <allow user="*"/>
                <deny own="*"/>
                <deny send_type="method_call"/>
                <allow send_type="signal"/>
                <allow send_requested_reply="true" send_type="method_return"/>
                <allow send_requested_reply="true" send_type="error"/>
                <allow receive_type="method_call"/>
                <allow receive_type="method_return"/>
                <allow receive_type="error"/>
                <allow receive_type="signal"/>
                <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
                <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
                <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>
              </policy>
              <include>\(file)</include>
            """
        }
        if systemPolicy != nil {
            try """
                <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
                 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
                <busconfig>
                  <type>system</type>
                  <listen>\(listen)</listen>
                  <auth>EXTERNAL</auth>
                \(policy ?? "")
                </busconfig>
                """.write(toFile: folder + "/bus.conf", atomically: true, encoding: .utf8)
        } else {
        try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <keep_umask/>
              <listen>\(listen)</listen>
              <servicedir>\(folder)/services</servicedir>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """.write(toFile: folder + "/bus.conf", atomically: true, encoding: .utf8)
        }
        daemon = try ChildProcess(
            "/usr/bin/dbus-daemon", ["--config-file=\(folder)/bus.conf", "--nofork", "--print-address=1"])
        guard let line = daemon.readLine(), !line.isEmpty else {
            throw TestSetupError("dbus-daemon printed no address")
        }
        address = line
    }

    /// Stops the bus daemon, as when a session ends.
    public func stop() { daemon.stop() }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

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
