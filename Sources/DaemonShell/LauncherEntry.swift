import AlertJournal
import DBus
import CCRelayCore
import CoreVocabulary
import DesktopServices

/// The dock badge, through the Unity LauncherEntry API that GNOME's Dash to
/// Dock, Plank, KDE's task manager and others read: an `Update` signal with
/// the application's URI and `count`, `count-visible` and `urgent`, and a
/// `Query` method for a dock that starts later.
enum LauncherEntry {
    static let applicationURI = "application://io.github.ccrelay.CCRelay.desktop"
    static let path: ObjectPath = "/com/canonical/unity/launcherentry/ccrelay"
    static let interfaceName = "com.canonical.Unity.LauncherEntry"
    /// The name a dock that reads LauncherEntry owns (Plank, Unity, Dash to Dock's helper).
    static let dockName = "com.canonical.Unity"

    /// The `a{sv}` of properties for `badge`.
    static func properties(_ badge: BadgeState) -> Value {
        let entries: [String: Variant] = [
            "count": Variant(Int64(badge.count)),
            "count-visible": Variant(badge.count > 0),
            "urgent": Variant(badge.urgent),
        ]
        return entries.dbusValue
    }

    /// The exported object: `Query() → (s a{sv})` answering with `current()`.
    static func interface(current: @escaping () -> BadgeState) -> Interface {
        Interface(
            name: interfaceName,
            methods: [
                .init("Query", output: "sa{sv}") { _ throws(DBusError) in [.string(applicationURI), properties(current())] }
            ],
            signals: [.init("Update", signature: "sa{sv}")])
    }

    /// Emits `Update` with the full state (on the connection's loop).
    static func announce(_ badge: BadgeState, on connection: Connection) throws(DBusError) {
        try connection.emit(path: path, interface: interfaceName, member: "Update",
                            body: [.string(applicationURI), properties(badge)])
    }
}
