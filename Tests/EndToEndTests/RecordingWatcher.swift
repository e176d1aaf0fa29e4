import DBus
import DBusAsync
import Foundation
import TestSupport

/// An `org.kde.StatusNotifierWatcher` that records who registers, and a
/// tray host's reads: the item's properties, the menu's layout, clicks, and
/// the item's and menu's signals.
final class RecordingWatcher: Sendable {
    static let name = "org.kde.StatusNotifierWatcher"
    let connection: Connection
    /// (sender, service) of each RegisterStatusNotifierItem call.
    let registrations = LockedBox<[(String, String)]>([])
    /// Member names of the signals the item and its menu sent.
    let signals = LockedBox<[String]>([])

    init(on bus: PrivateBus) async throws {
        connection = try bus.connect(label: "watcher")
        let registrations = registrations
        let signals = signals
        connection.loop.sync {
            connection.export([Interface(
                name: Self.name,
                methods: [
                    .init("RegisterStatusNotifierItem", input: "s") { message throws(DBusError) in
                        let service: String = try message.argument(0)
                        registrations.update { $0.append((message.sender ?? "", service)) }
                        return []
                    },
                    .init("RegisterStatusNotifierHost", input: "s") { _ in [] },
                ],
                properties: [
                    .init("RegisteredStatusNotifierItems", signature: "as") {
                        .array(element: "s", registrations.get().map { .string($0.1) })
                    },
                    .init("IsStatusNotifierHostRegistered", signature: "b") { .boolean(true) },
                    .init("ProtocolVersion", signature: "i") { .int32(0) },
                ])], at: "/StatusNotifierWatcher")
            for interface in ["org.kde.StatusNotifierItem", "com.canonical.dbusmenu"] {
                _ = connection.subscribe(MatchRule(interface: interface)) { message in
                    signals.update { $0.append(message.member ?? "") }
                }
            }
        }
        _ = try await connection.requestName(Self.name)
    }

    deinit { connection.loop.sync { connection.close() } }

    /// The service the item registered (its bus name).
    var service: String? { registrations.get().last?.1 }

    /// The panel restarts: the name goes and comes back.
    func restart() async throws {
        _ = try await connection.releaseName(Self.name)
        _ = try await connection.requestName(Self.name)
    }

    func properties(of service: String) async throws -> [String: Variant] {
        let reply = try await connection.call(.methodCall(
            destination: service, path: "/StatusNotifierItem", interface: "org.freedesktop.DBus.Properties", member: "GetAll",
            body: [.string("org.kde.StatusNotifierItem")]))
        return try reply.argument(0)
    }

    /// The menu's entries under the root: (id, label, enabled); `implicit`, the entries
    /// (not separators) whose properties leave `enabled` to its default.
    func menu(of service: String) async throws -> (revision: UInt32, entries: [(Int32, String, Bool)], implicit: [Int32]) {
        let reply = try await connection.call(.methodCall(
            destination: service, path: "/io/github/ccrelay/CCRelay/Menu", interface: "com.canonical.dbusmenu", member: "GetLayout",
            body: [.int32(0), .int32(-1), .array(element: "s", [])]))
        let revision: UInt32 = try reply.argument(0)
        guard reply.body.count == 2, case .structure(let root) = reply.body[1], root.count == 3, case .array(_, let children) = root[2]
        else { throw TestSetupError("GetLayout answered \(reply.body)") }
        var entries: [(Int32, String, Bool)] = []
        var implicit: [Int32] = []
        for case .variant(.structure(let node)) in children where node.count == 3 {
            guard case .int32(let id) = node[0], case .dictionary(_, _, let properties) = node[1] else { continue }
            var label = ""
            var enabled = true
            for entry in properties {
                if entry.key == .string("label"), case .variant(.string(let text)) = entry.value { label = text }
                if entry.key == .string("enabled"), case .variant(.boolean(let flag)) = entry.value { enabled = flag }
                if entry.key == .string("type"), case .variant(.string("separator")) = entry.value { label = "-" }
            }
            entries.append((id, label, enabled))
            if label != "-" && !properties.contains(where: { $0.key == .string("enabled") }) { implicit.append(id) }
        }
        return (revision, entries, implicit)
    }

    /// What a host sends when an entry is clicked.
    func click(_ id: Int32, of service: String) async throws {
        _ = try await connection.call(.methodCall(
            destination: service, path: "/io/github/ccrelay/CCRelay/Menu", interface: "com.canonical.dbusmenu", member: "Event",
            body: [.int32(id), .string("clicked"), .variant(.string("")), .uint32(0)]))
    }

    /// The primary click on the icon.
    func activate(_ service: String) async throws {
        _ = try await connection.call(.methodCall(
            destination: service, path: "/StatusNotifierItem", interface: "org.kde.StatusNotifierItem", member: "Activate",
            body: [.int32(0), .int32(0)]))
    }
}
