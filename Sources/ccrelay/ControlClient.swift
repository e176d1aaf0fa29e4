import AlertJournal
import DBus
import DBusAsync
import DispatchLoop
import Dispatch
import DesktopServices

/// Why a call to the daemon did not get an answer.
enum ControlFailure: Error {
    /// Nobody owns io.github.ccrelay.CCRelay on the session bus.
    case notRunning
    /// No session bus, or the daemon answered with an error.
    case failed(String)

    /// Prints the failure for `command` and returns its exit status (3 or 1).
    func report(_ command: String) -> Int32 {
        switch self {
        case .notRunning:
            Output.error("\(command): " + localize("the ccrelay daemon is not running in this session; start it with: systemctl --user start ccrelay (or: ccrelay daemon)"))
            return ExitStatus.daemonNotRunning
        case .failed(let message):
            Output.error("\(command): \(message)")
            return ExitStatus.failure
        }
    }
}

/// The CLI's side of the daemon's D-Bus API (docs/design.md): one short-lived
/// connection, one method call per need.
struct ControlClient {
    let connection: Connection

    /// Connects to the session bus.
    static func connect() throws(ControlFailure) -> ControlClient {
        do {
            return ControlClient(connection: try Connection(bus: .session, loop: DispatchScheduler(label: "ccrelay.cli")))
        } catch {
            throw .failed("cannot connect to the session bus (\(error.message)); run this inside your desktop session")
        }
    }

    /// Calls `member` on the daemon's control object.
    func call(_ member: String, _ body: [Value] = [], timeout: Duration = .seconds(10)) async throws(ControlFailure) -> Message {
        let message = Message.methodCall(
            destination: ControlNames.busName, path: ControlNames.path, interface: ControlNames.interface, member: member,
            body: body)
        do {
            return try await connection.call(message, timeout: timeout)
        } catch {
            if error.name == .serviceUnknown || error.name == .nameHasNoOwner { throw .notRunning }
            throw .failed("the daemon did not answer \(member): \(error.message)")
        }
    }

    func status() async throws(ControlFailure) -> DaemonStatus {
        let reply = try await call("GetStatus")
        do {
            return DaemonStatus(dictionary: try reply.argument(0, as: [String: Variant].self))
        } catch {
            throw .failed("the daemon's status was malformed: \(error.message)")
        }
    }

    func alerts(limit: UInt32) async throws(ControlFailure) -> [JournalEntry] {
        let reply = try await call("ListAlerts", [.uint32(limit)])
        do {
            return try reply.argument(0, as: [[String: Variant]].self).compactMap(JournalEntry.init(dictionary:))
        } catch {
            throw .failed("the daemon's alert list was malformed: \(error.message)")
        }
    }

    /// Calls `handler` (on the connection's queue) each time the daemon
    /// announces a change of its control properties.
    func onPropertiesChanged(_ handler: @escaping () -> Void) {
        connection.loop.sync {
            _ = connection.subscribe(.propertiesChanged(sender: ControlNames.busName, path: ControlNames.path, of: ControlNames.interface)) {
                _ in handler()
            }
        }
    }

    func close() {
        connection.loop.sync { connection.close() }
    }
}
