import AlertJournal
import DBus
import DBusAsync
import DispatchLoop
import Dispatch
import DesktopServices
import CCRelayCore

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

/// The CLI's side of the daemon's D-Bus API (docs/contracts.md): one short-lived
/// connection, one method call per need.
struct ControlClient {
    let connection: Connection
    /// The daemon's name on that bus (an instance of the system service has its own).
    var busName = ControlNames.busName

    /// Connects to the daemon's bus: the system bus with `ccrelay --system`;
    /// else the session bus — or, when no daemon runs in this session (or
    /// there is no session bus) but the system service does, the system bus,
    /// saying so (unless `systemServiceToo` is false).
    static func connect(systemServiceToo: Bool = true) async throws(ControlFailure) -> ControlClient {
        if CLI.systemService {
            var client = try connect(.system)
            client.busName = SystemService.busName(instance: CLI.instance)
            return client
        }
        let session: ControlClient
        do {
            session = try connect(.session)
        } catch {
            guard systemServiceToo, let system = await systemService() else { throw error }
            return system
        }
        guard systemServiceToo, (try? await session.connection.nameOwner(ControlNames.busName)) == .some(nil),
            let system = await systemService()
        else { return session }
        session.close()
        return system
    }

    /// The system bus, when the system service owns its name there (said on standard error).
    private static func systemService() async -> ControlClient? {
        guard let client = try? connect(.system) else { return nil }
        guard (try? await client.connection.nameOwner(ControlNames.busName)) != nil else {
            client.close()
            return nil
        }
        Output.error(localize("no daemon runs in this session; the system service (ccrelay.service) answers"))
        return client
    }

    private static func connect(_ bus: Bus) throws(ControlFailure) -> ControlClient {
        do {
            return ControlClient(connection: try Connection(bus: bus, loop: DispatchScheduler(label: "ccrelay.cli")))
        } catch {
            if bus == .system { throw .failed(fill(localize("cannot connect to the system bus (%s)"), error.message)) }
            throw .failed(fill(localize("cannot connect to the session bus (%s); run this inside your desktop session"), error.message))
        }
    }

    /// Calls `member` on the daemon's control object.
    func call(_ member: String, _ body: [Value] = [], timeout: Duration = .seconds(10)) async throws(ControlFailure) -> Message {
        let message = Message.methodCall(
            destination: busName, path: ControlNames.path, interface: ControlNames.interface, member: member,
            body: body)
        do {
            return try await connection.call(message, timeout: timeout)
        } catch {
            if error.name == .serviceUnknown || error.name == .nameHasNoOwner { throw .notRunning }
            // The system service's bus policy: everyone reads, only root and the group ccrelay act.
            if error.name == .accessDenied {
                throw .failed(fill(localize("not allowed to %s the system service: only root and members of the group %s may (sudo, or: sudo usermod -aG %s $USER)"),
                                   member, SystemService.group, SystemService.group))
            }
            throw .failed(fill(localize("the daemon did not answer %s: %s"), member, error.message))
        }
    }

    func status(timeout: Duration = .seconds(10)) async throws(ControlFailure) -> DaemonStatus {
        let reply = try await call("GetStatus", timeout: timeout)
        do {
            return DaemonStatus(dictionary: try reply.argument(0, as: [String: Variant].self))
        } catch {
            throw .failed(fill(localize("the daemon's answer was malformed: %s"), error.message))
        }
    }

    func timeline(since: Double) async throws(ControlFailure) -> [TimelineEntry] {
        let reply = try await call("ListTimeline", [.double(since)])
        do {
            return try reply.argument(0, as: [[String: Variant]].self).compactMap(TimelineEntry.init(dictionary:))
        } catch {
            throw .failed(fill(localize("the daemon's answer was malformed: %s"), error.message))
        }
    }

    func alerts(limit: UInt32) async throws(ControlFailure) -> [JournalEntry] {
        let reply = try await call("ListAlerts", [.uint32(limit)])
        do {
            return try reply.argument(0, as: [[String: Variant]].self).compactMap(JournalEntry.init(dictionary:))
        } catch {
            throw .failed(fill(localize("the daemon's answer was malformed: %s"), error.message))
        }
    }

    /// Calls `handler` (on the connection's queue) each time the daemon
    /// announces a change of its control properties.
    func onPropertiesChanged(_ handler: @escaping () -> Void) {
        connection.loop.sync {
            _ = connection.subscribe(.propertiesChanged(sender: busName, path: ControlNames.path, of: ControlNames.interface)) {
                _ in handler()
            }
        }
    }

    func close() {
        connection.loop.sync { connection.close() }
    }
}
