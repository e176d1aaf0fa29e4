import CCProtocol
import DBus
import EventLoop
import CCRelayCore

/// Location from GeoClue2 on the system bus: a client with the application
/// ID as `DesktopId`, exact accuracy requested, thresholds for a keep-alive
/// (not navigation), `LocationUpdated` subscribed before `Start`, `Active`
/// watched; `Stop` and `DeleteClient` when no longer needed. GeoClue's
/// refusals are mapped onto the location problems of docs/contracts.md.
///
/// Confinement: state is used only on `loop`, where every D-Bus completion runs.
final class GeoClueLocation: LocationSource {
    static let service = "org.freedesktop.GeoClue2"
    static let managerPath: ObjectPath = "/org/freedesktop/GeoClue2/Manager"
    static let managerInterface = "org.freedesktop.GeoClue2.Manager"
    static let clientInterface = "org.freedesktop.GeoClue2.Client"
    static let locationInterface = "org.freedesktop.GeoClue2.Location"
    /// GClueAccuracyLevel: exact is requested; anything below street level is too coarse.
    static let exact: UInt32 = 8
    static let street: UInt32 = 6
    /// How long GetClient may wait for geoclue to find a location agent.
    static let agentWait: Duration = .seconds(10)

    private let loop: any EventScheduler
    private let desktopID: String
    private let log: (String) -> Void
    private let report: (LocationReport<LocationFix>) -> Void
    private var connection: Connection?
    private var client: ObjectPath?
    /// Bumped by `stop`, so that answers to an earlier start are ignored.
    private var generation = 0

    init(loop: any EventScheduler, desktopID: String, log: @escaping (String) -> Void,
         report: @escaping (LocationReport<LocationFix>) -> Void) {
        self.loop = loop
        self.desktopID = desktopID
        self.log = log
        self.report = report
    }

    func start() {
        loop.preconditionIsCurrent()
        guard connection == nil else { return }
        let connection: Connection
        do {
            connection = try Connection(bus: .system, loop: loop)
        } catch {
            log("location: no system bus (\(error.message))")
            return report(.problem(.off(.unavailable)))
        }
        self.connection = connection
        generation += 1
        begin(on: connection, generation: generation)
    }

    func stop() {
        loop.preconditionIsCurrent()
        generation += 1
        guard let connection else { return }
        self.connection = nil
        let client = client
        self.client = nil
        guard let client else { return connection.close() }
        connection.call(.methodCall(destination: Self.service, path: client, interface: Self.clientInterface, member: "Stop")) { _ in
            connection.call(.methodCall(
                destination: Self.service, path: Self.managerPath, interface: Self.managerInterface,
                member: "DeleteClient", body: [.objectPath(client)])
            ) { _ in connection.close() }
        }
    }

    /// GetClient, its properties, the subscriptions, then Start: completion
    /// calls on `loop` (the daemon has no Swift concurrency: one thread).
    /// Answers to a stopped client are ignored.
    private func begin(on connection: Connection, generation: Int) {
        // Real geoclue holds GetClient until a location agent for this user appears.
        connection.call(
            .methodCall(destination: Self.service, path: Self.managerPath, interface: Self.managerInterface, member: "GetClient"),
            timeout: Self.agentWait
        ) { [weak self] result in
            guard let self, generation == self.generation else { return }
            let path: ObjectPath
            do throws(DBusError) {
                path = try result.get().argument(0, as: ObjectPath.self)
            } catch {
                return self.failed(error)
            }
            let settings: [(String, Value)] = [
                ("DesktopId", .string(self.desktopID)), ("RequestedAccuracyLevel", .uint32(Self.exact)),
                ("DistanceThreshold", .uint32(LocationThresholds.distanceMeters)),
                ("TimeThreshold", .uint32(LocationThresholds.timeSeconds)),
            ]
            self.set(settings[...], on: path, connection, generation) {
                self.client = path
                self.subscribe(connection, client: path, generation: generation)
                // What the agent allows this application: below street level the campus cannot use it.
                connection.allProperties(Self.service, Self.managerPath, Self.managerInterface) { result in
                    guard generation == self.generation else { return }
                    let available = (try? result.get())?["AvailableAccuracyLevel"]?.get(UInt32.self) ?? Self.exact
                    self.report(.approximateOnly(available < Self.street))
                }
                connection.call(.methodCall(destination: Self.service, path: path, interface: Self.clientInterface, member: "Start")) {
                    result in
                    guard generation == self.generation, case .failure(let error) = result else { return }
                    self.failed(error)
                }
            }
        }
    }

    /// Sets the client's properties one after the other, then calls `done`.
    private func set(_ settings: ArraySlice<(String, Value)>, on path: ObjectPath, _ connection: Connection, _ generation: Int,
                     done: @escaping () -> Void) {
        guard let (name, value) = settings.first else { return done() }
        connection.setProperty(Self.service, path, Self.clientInterface, name, value) { [weak self] error in
            guard let self, generation == self.generation else { return }
            if let error { return self.failed(error) }
            self.set(settings.dropFirst(), on: path, connection, generation, done: done)
        }
    }

    private func subscribe(_ connection: Connection, client path: ObjectPath, generation: Int) {
        _ = connection.subscribe(MatchRule(sender: Self.service, path: path, interface: Self.clientInterface, member: "LocationUpdated")) {
            [weak self] message in
            guard let self, generation == self.generation, let location = try? message.argument(1, as: ObjectPath.self) else { return }
            connection.allProperties(Self.service, location, Self.locationInterface) { result in
                guard generation == self.generation, let properties = try? result.get(), let fix = LocationFix(properties: properties, now: self.loop.wallClock)
                else { return }
                self.report(.fix(fix))
            }
        }
        _ = connection.subscribe(.propertiesChanged(sender: Self.service, path: path, of: Self.clientInterface)) { [weak self] message in
            guard let self, generation == self.generation,
                  let changed = try? message.argument(1, as: [String: Variant].self),
                  changed["Active"]?.get(Bool.self) == false
            else { return }
            self.report(.problem(.tooCoarse(.stopped)))
        }
    }

    /// Maps GeoClue's refusals (the messages real geoclue sends) onto problems.
    private func failed(_ error: DBusError) {
        let problem: LocationProblem
        switch error.name {
        case .accessDenied:
            if error.message.contains("no agent") {
                problem = .denied(.noAgent)
            } else if error.message.contains("by configuration") {
                problem = .denied(.byConfiguration)
            } else if error.message.contains("Geolocation disabled") {
                problem = .off(.disabled)
            } else {
                problem = .denied(.byUser)
            }
        case .noReply, .timeout:
            // GeoClue kept waiting for a location agent that never came.
            problem = .denied(.noAgent)
        default:
            problem = .off(.unavailable)
        }
        log("location: GeoClue refused (\(error.name.rawValue): \(error.message))")
        report(.problem(problem))
    }
}
