import DBus
import DBusAsync
import Foundation
import TestSupport

/// Records every LauncherEntry `Update` for ccrelay's desktop file on a bus,
/// as a dock would see them.
final class LauncherEntryRecorder: Sendable {
    struct Badge: Sendable, Equatable, CustomStringConvertible {
        var count: Int64
        var visible: Bool
        var urgent: Bool
        var description: String { "\(count)\(visible ? "" : " hidden")\(urgent ? " urgent" : "")" }
    }

    private let connection: Connection
    let updates = LockedBox<[Badge]>([])

    init(on bus: PrivateBus) throws {
        connection = try bus.connect(label: "dock")
        let updates = updates
        connection.loop.sync {
            _ = connection.subscribe(MatchRule(interface: "com.canonical.Unity.LauncherEntry", member: "Update")) { message in
                guard (try? message.argument(0, as: String.self)) == "application://io.github.ccrelay.CCRelay.desktop",
                      let properties = try? message.argument(1, as: [String: Variant].self),
                      let count = properties["count"]?.get(Int64.self),
                      let visible = properties["count-visible"]?.get(Bool.self),
                      let urgent = properties["urgent"]?.get(Bool.self)
                else { return }
                updates.update { $0.append(Badge(count: count, visible: visible, urgent: urgent)) }
            }
        }
    }

    deinit { connection.loop.sync { connection.close() } }

    var last: Badge? { updates.get().last }
}
