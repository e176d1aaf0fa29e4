import CCProtocol
import DBus
import EventLoop
import CCRelayCore

/// Location from the Location portal (`org.freedesktop.portal.Location`) on
/// the session bus, the way a sandboxed (Flatpak) application gets it:
/// `CreateSession`, `Start` answered by a `Request.Response` (0 granted,
/// 1 refused by the user, 2 refused otherwise), then `LocationUpdated`.
///
/// Confinement: state is used only on `loop`, where every D-Bus completion runs.
final class PortalLocation: LocationSource {
    static let service = "org.freedesktop.portal.Desktop"
    static let path: ObjectPath = "/org/freedesktop/portal/desktop"
    static let interface = "org.freedesktop.portal.Location"
    /// The portal's accuracy enum: 5 is exact.
    static let exact: UInt32 = 5

    private let loop: any EventScheduler
    private let connection: Connection
    private let log: (String) -> Void
    private let report: (LocationReport<LocationFix>) -> Void
    private var session: ObjectPath?
    private var subscriptions: [SubscriptionToken] = []
    private var generation = 0
    private var tokens = 0

    /// `connection` is the daemon's session-bus connection (on `loop`).
    init(loop: any EventScheduler, connection: Connection, log: @escaping (String) -> Void,
         report: @escaping (LocationReport<LocationFix>) -> Void) {
        self.loop = loop
        self.connection = connection
        self.log = log
        self.report = report
    }

    /// A fresh handle token (the portal derives request and session paths from it).
    private func token() -> String {
        tokens += 1
        return "ccrelay\(tokens)"
    }

    func start() {
        loop.preconditionIsCurrent()
        guard session == nil, subscriptions.isEmpty else { return }
        generation += 1
        let generation = generation
        // The request path is known before Start: subscribe to its Response first.
        let sender = String(connection.uniqueName.dropFirst()).replacing(".", with: "_")
        let requestToken = token()
        let request = ObjectPath(rawValue: "/org/freedesktop/portal/desktop/request/\(sender)/\(requestToken)")
        if let request {
            subscriptions.append(connection.subscribe(
                MatchRule(sender: Self.service, path: request, interface: "org.freedesktop.portal.Request", member: "Response")
            ) { [weak self] message in
                guard let self, generation == self.generation, let code = try? message.argument(0, as: UInt32.self) else { return }
                self.responded(code)
            })
        }
        subscriptions.append(connection.subscribe(
            MatchRule(sender: Self.service, path: Self.path, interface: Self.interface, member: "LocationUpdated")
        ) { [weak self] message in
            guard let self, generation == self.generation, let session = self.session,
                  (try? message.argument(0, as: ObjectPath.self)) == session,
                  let properties = try? message.argument(1, as: [String: Variant].self), let fix = LocationFix(properties: properties, now: self.loop.wallClock)
            else { return }
            self.report(.fix(fix))
        })
        let sessionToken = token()
        let options: [String: Variant] = [
            "session_handle_token": Variant(sessionToken),
            "distance-threshold": Variant(LocationThresholds.distanceMeters),
            "time-threshold": Variant(LocationThresholds.timeSeconds),
            "accuracy": Variant(Self.exact),
        ]
        // Completion calls on `loop`: the daemon has no Swift concurrency (one thread).
        connection.call(.methodCall(
            destination: Self.service, path: Self.path, interface: Self.interface, member: "CreateSession",
            body: [options.dbusValue])
        ) { [weak self] result in
            guard let self, generation == self.generation else { return }
            let session: ObjectPath
            do throws(DBusError) {
                session = try result.get().argument(0, as: ObjectPath.self)
            } catch {
                return self.failed(error)
            }
            self.session = session
            let startOptions: [String: Variant] = ["handle_token": Variant(requestToken)]
            self.connection.call(.methodCall(
                destination: Self.service, path: Self.path, interface: Self.interface, member: "Start",
                body: [.objectPath(session), .string(""), startOptions.dbusValue])
            ) { result in
                guard generation == self.generation, case .failure(let error) = result else { return }
                self.failed(error)
            }
        }
    }

    func stop() {
        loop.preconditionIsCurrent()
        generation += 1
        subscriptions.forEach(connection.unsubscribe)
        subscriptions = []
        if let session {
            // Closing the session ends the portal's location updates.
            connection.call(.methodCall(destination: Self.service, path: session, interface: "org.freedesktop.portal.Session", member: "Close")) { _ in }
        }
        session = nil
    }

    private func responded(_ code: UInt32) {
        switch code {
        case 0: break
        case 1:
            log("location: the portal's request was refused by the user")
            report(.problem(.denied(.byUser)))
        default:
            log("location: the portal could not start location (response \(code))")
            report(.problem(.off(.disabled)))
        }
    }

    private func failed(_ error: DBusError) {
        log("location: the portal refused (\(error.name.rawValue): \(error.message))")
        switch error.name.rawValue {
        case "org.freedesktop.portal.Error.NotAllowed": report(.problem(.off(.disabled)))
        case DBusError.Name.serviceUnknown.rawValue, DBusError.Name.unknownMethod.rawValue, DBusError.Name.unknownInterface.rawValue:
            report(.problem(.off(.unavailable)))
        default: report(.problem(.denied(.byUser)))
        }
    }
}
