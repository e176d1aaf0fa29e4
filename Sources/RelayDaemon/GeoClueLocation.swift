import CCProtocol
import DBus
import Dispatch
import RelayCore

/// Location from GeoClue2 on the system bus: a client with the application
/// ID as `DesktopId`, exact accuracy requested, thresholds for a keep-alive
/// (not navigation), `LocationUpdated` subscribed before `Start`, `Active`
/// watched; `Stop` and `DeleteClient` when no longer needed. GeoClue's
/// refusals are mapped onto the location problems of DESIGN.md.
///
/// Confinement (why `@unchecked Sendable` is sound): state is used only on
/// `queue`; the awaited calls hop back to it before touching anything.
final class GeoClueLocation: LocationSource, @unchecked Sendable {
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

    private let queue: DispatchQueue
    private let desktopID: String
    private let log: @Sendable (String) -> Void
    private let report: (LocationReport) -> Void
    private var connection: Connection?
    private var client: ObjectPath?
    /// Bumped by `stop`, so that answers to an earlier start are ignored.
    private var generation = 0

    init(queue: DispatchQueue, desktopID: String, log: @escaping @Sendable (String) -> Void,
         report: @escaping (LocationReport) -> Void) {
        self.queue = queue
        self.desktopID = desktopID
        self.log = log
        self.report = report
    }

    func start() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard connection == nil else { return }
        let connection: Connection
        do {
            connection = try Connection(bus: .system, queue: queue)
        } catch {
            log("location: no system bus (\(error.message))")
            return report(.problem(.off(.unavailable)))
        }
        self.connection = connection
        generation += 1
        let generation = generation
        Task { await self.begin(on: connection, generation: generation) }
    }

    func stop() {
        dispatchPrecondition(condition: .onQueue(queue))
        generation += 1
        guard let connection else { return }
        self.connection = nil
        let client = client
        self.client = nil
        Task {
            if let client {
                _ = try? await connection.call(.methodCall(
                    destination: Self.service, path: client, interface: Self.clientInterface, member: "Stop"))
                _ = try? await connection.call(.methodCall(
                    destination: Self.service, path: Self.managerPath, interface: Self.managerInterface,
                    member: "DeleteClient", body: [.objectPath(client)]))
            }
            connection.queue.async { connection.close() }
        }
    }

    /// GetClient, its properties, the subscriptions, then Start.
    private func begin(on connection: Connection, generation: Int) async {
        let path: ObjectPath
        do {
            // Real geoclue holds GetClient until a location agent for this user appears.
            let reply = try await connection.call(
                .methodCall(destination: Self.service, path: Self.managerPath, interface: Self.managerInterface, member: "GetClient"),
                timeout: Self.agentWait)
            path = try reply.argument(0, as: ObjectPath.self)
            for (name, value) in [("DesktopId", Value.string(desktopID)), ("RequestedAccuracyLevel", .uint32(Self.exact)),
                                  ("DistanceThreshold", .uint32(LocationThresholds.distanceMeters)),
                                  ("TimeThreshold", .uint32(LocationThresholds.timeSeconds))] {
                try await connection.setProperty(Self.service, path, Self.clientInterface, name, value)
            }
        } catch {
            return finish(generation) { self.failed(error) }
        }
        let subscribed: Bool = await withCheckedContinuation { continuation in
            queue.async {
                guard generation == self.generation else { return continuation.resume(returning: false) }
                self.client = path
                self.subscribe(connection, client: path, generation: generation)
                continuation.resume(returning: true)
            }
        }
        guard subscribed else { return }
        // What the agent allows this application: below street level the campus cannot use it.
        if let manager = try? await connection.allProperties(Self.service, Self.managerPath, Self.managerInterface),
           let available = manager["AvailableAccuracyLevel"]?.get(UInt32.self), available < Self.street
        {
            finish(generation) { self.report(.problem(.tooCoarse(.approximate))) }
        }
        do {
            _ = try await connection.call(.methodCall(
                destination: Self.service, path: path, interface: Self.clientInterface, member: "Start"))
        } catch {
            finish(generation) { self.failed(error) }
        }
    }

    private func subscribe(_ connection: Connection, client path: ObjectPath, generation: Int) {
        _ = connection.subscribe(MatchRule(sender: Self.service, path: path, interface: Self.clientInterface, member: "LocationUpdated")) {
            [weak self] message in
            guard let self, generation == self.generation, let location = try? message.argument(1, as: ObjectPath.self) else { return }
            Task {
                guard let properties = try? await connection.allProperties(Self.service, location, Self.locationInterface),
                      let fix = LocationFix(properties: properties)
                else { return }
                self.finish(generation) { self.report(.fix(fix)) }
            }
        }
        _ = connection.subscribe(MatchRule(sender: Self.service, path: path, interface: "org.freedesktop.DBus.Properties",
                                           member: "PropertiesChanged", arg0: Self.clientInterface)) { [weak self] message in
            guard let self, generation == self.generation,
                  let changed = try? message.argument(1, as: [String: Variant].self),
                  changed["Active"]?.get(Bool.self) == false
            else { return }
            self.report(.problem(.tooCoarse(.stopped)))
        }
    }

    /// Runs `body` on the queue unless the client was stopped meanwhile.
    private func finish(_ generation: Int, _ body: @escaping @Sendable () -> Void) {
        queue.async { if generation == self.generation { body() } }
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
