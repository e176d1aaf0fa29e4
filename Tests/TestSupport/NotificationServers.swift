import DBus
import DBusAsync
import Foundation

/// The notification service name.
public let notificationsName = "org.freedesktop.Notifications"
public let notificationsPath: ObjectPath = "/org/freedesktop/Notifications"

/// A real dunst on a private bus, drawing on the X display of the test run.
public final class Dunst: Sendable {
    private let process: ChildProcess
    public let bus: PrivateBus

    public init(on bus: PrivateBus) async throws {
        guard ProcessInfo.processInfo.environment["DISPLAY"] != nil else {
            throw TestSetupError("dunst needs DISPLAY (run the tests through `make test`, which starts Xvfb)")
        }
        self.bus = bus
        process = try ChildProcess(
            "/usr/bin/dunst", ["-config", Dunst.configPath], environment: bus.environment, captureOutput: false)
        guard try await bus.waitForName(notificationsName) else { throw TestSetupError("dunst did not start") }
    }

    /// The project's dunstrc (scripts/dunstrc): bubbles stay until closed and
    /// every one is kept in history; markup is parsed, as on most desktops.
    public static let configPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/dunstrc").path

    /// Stops dunst and waits until its bus name is gone.
    public func stop() async throws {
        process.stop()
        _ = try await bus.waitForNameToVanish(notificationsName)
    }

    /// Runs `dunstctl` against this dunst.
    public func control(_ arguments: [String]) throws -> CommandResult {
        try run("/usr/bin/dunstctl", arguments, environment: bus.environment)
    }

    /// One notification as dunst's history reports it.
    public struct Record: Sendable {
        public var id: Int
        public var appName: String
        public var summary: String
        public var body: String
        public var category: String
    }

    /// Closes every open bubble, then reads the history (newest first).
    public func closeAllAndReadHistory() throws -> [Record] {
        _ = try control(["close-all"])
        let output = try control(["history"]).standardOutput
        guard let json = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any],
            let outer = json["data"] as? [[[String: Any]]], let entries = outer.first
        else { throw TestSetupError("unreadable dunstctl history: \(output)") }
        func field(_ entry: [String: Any], _ key: String) -> Any? { (entry[key] as? [String: Any])?["data"] }
        return entries.map { entry in
            Record(
                id: field(entry, "id") as? Int ?? -1, appName: field(entry, "appname") as? String ?? "",
                summary: field(entry, "summary") as? String ?? "", body: field(entry, "body") as? String ?? "",
                category: field(entry, "category") as? String ?? "")
        }
    }
}

/// python3-dbusmock's `notification_daemon` template on a private bus: it
/// records every call with its exact types.
public final class MockNotificationServer: Sendable {
    private let process: ChildProcess
    public let bus: PrivateBus
    private let connection: Connection

    /// Starts the mock advertising `capabilities`.
    public init(on bus: PrivateBus, capabilities: [String]) async throws {
        self.bus = bus
        let parameters = "{\"capabilities\": \"\(capabilities.joined(separator: " "))\"}"
        process = try ChildProcess(
            "/usr/bin/python3", ["-m", "dbusmock", "--template", "notification_daemon", "-p", parameters],
            environment: bus.environment, captureOutput: false)
        guard try await bus.waitForName(notificationsName) else {
            throw TestSetupError("python3-dbusmock's notification_daemon did not start")
        }
        connection = try bus.connect(label: "mock-control")
        // The template declares CloseNotification with 'i'; the specification says 'u'.
        _ = try await mock(
            "AddMethod",
            [
                .string(notificationsName), .string("CloseNotification"), .string("u"), .string(""),
                .string("self.EmitSignal('', 'NotificationClosed', 'uu', [args[0], 3])"),
            ])
    }

    deinit { connection.loop.sync { connection.close() } }

    /// Replaces a method of the notification interface with python `code`
    /// (dbusmock's AddMethod), for example to answer with the wrong types.
    public func replaceMethod(_ name: String, input: String, output: String, code: String) async throws {
        _ = try await mock("AddMethod", [.string(notificationsName), .string(name), .string(input), .string(output), .string(code)])
    }

    private func mock(_ member: String, _ body: [Value]) async throws -> Message {
        try await connection.call(
            .methodCall(
                destination: notificationsName, path: notificationsPath, interface: "org.freedesktop.DBus.Mock",
                member: member, body: body))
    }

    /// The arguments of every recorded call of `method`, oldest first.
    public func calls(_ method: String) async throws -> [[Value]] {
        let reply = try await mock("GetMethodCalls", [.string(method)])
        guard case .array(_, let calls)? = reply.body.first else { return [] }
        return calls.compactMap { call in
            guard case .structure(let fields) = call, fields.count == 2, case .array(_, let args) = fields[1] else {
                return nil
            }
            return args.map { if case .variant(let inner) = $0 { inner } else { $0 } }
        }
    }

    /// Emits a signal of the notification interface from the mock.
    public func emit(_ member: String, signature: Signature, _ arguments: [Value]) async throws {
        _ = try await mock(
            "EmitSignal",
            [
                .string(notificationsName), .string(member), .signature(signature),
                .array(element: "v", arguments.map { .variant($0) }),
            ])
    }

    /// Stops the mock and waits until its name is gone.
    public func stop() async throws {
        process.stop()
        _ = try await bus.waitForNameToVanish(notificationsName)
    }
}

/// A python3-dbusmock template (such as `logind` or `networkmanager`) on a
/// private bus that stands in for the system bus.
public final class MockSystemService: Sendable {
    private let process: ChildProcess
    public let connection: Connection

    /// Starts the dbusmock `template` (a name, or the path of a template file)
    /// with its JSON `parameters`, and waits until it owns `name`.
    public init(template: String, name: String, parameters: String? = nil, on bus: PrivateBus) async throws {
        process = try ChildProcess(
            "/usr/bin/python3", ["-m", "dbusmock", "--template", template] + (parameters.map { ["-p", $0] } ?? []),
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address, "DBUS_SESSION_BUS_ADDRESS": bus.address], captureOutput: false)
        guard try await bus.waitForName(name) else { throw TestSetupError("dbusmock \(template) did not start") }
        connection = try bus.connect(label: "mock-\(template)")
    }

    deinit { connection.loop.sync { connection.close() } }

    /// Calls a method on the mock (its own methods or the Mock interface).
    @discardableResult
    public func call(_ destination: String, _ path: ObjectPath, _ interface: String, _ member: String, _ body: [Value] = [])
        async throws -> Message
    {
        try await connection.call(.methodCall(destination: destination, path: path, interface: interface, member: member, body: body))
    }
}
