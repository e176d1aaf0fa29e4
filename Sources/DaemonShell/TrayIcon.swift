import DBus
import DesktopServices
import EventLoop
import CCRelayCore
#if canImport(Glibc)
import Glibc
#endif

/// The tray icon: a StatusNotifierItem (`org.kde.StatusNotifierItem`, at
/// `/StatusNotifierItem`, under the name `org.kde.StatusNotifierItem-PID-1`)
/// with a `com.canonical.dbusmenu` menu at `/io/github/ccrelay/CCRelay/Menu`,
/// registered with `org.kde.StatusNotifierWatcher` whenever one appears (at
/// start, and again when a panel restarts) by the connection's unique name:
/// hosts that match signals to items by sender (Debian's gtk-sni-tray) then
/// follow its changes too. Where no watcher runs (GNOME
/// without the AppIndicator extension) nothing else happens. Its look and
/// menu come from `TrayModel` over the facts the daemon gives; properties
/// are read fresh on each `Get`, and `refresh()` emits the signals for what
/// changed (NewIcon, NewStatus, NewToolTip, LayoutUpdated).
///
/// Confinement: used only on the connection's loop.
final class TrayIcon {
    static let itemPath: ObjectPath = "/StatusNotifierItem"
    static let menuPath: ObjectPath = "/io/github/ccrelay/CCRelay/Menu"
    static let itemInterface = "org.kde.StatusNotifierItem"
    static let menuInterface = "com.canonical.dbusmenu"
    static let watcherName = "org.kde.StatusNotifierWatcher"
    static let watcherPath: ObjectPath = "/StatusNotifierWatcher"

    private var connection: Connection
    private let facts: () -> TrayFacts
    private let perform: (UserRequest?) -> Void
    private let activate: () -> Void
    private let log: (String) -> Void
    private let name = "org.kde.StatusNotifierItem-\(getpid())-1"
    private var watcherToken: SubscriptionToken?
    private var look: TrayLook?
    private var menu: [TrayMenuItem] = []
    private var revision: UInt32 = 1
    /// A watcher that just took its name may not have exported its object
    /// yet (Debian's status-notifier-watcher does so after): the
    /// registration is tried again a few times, a second apart.
    private var registrationRetry: (any LoopTimer)?
    private var iconAgain: (any LoopTimer)?
    private var registrationAttempts = 0
    static let registrationAttemptLimit = 5

    /// `perform` runs a clicked menu entry; `activate` is the primary click (the status bubble).
    init(connection: Connection, facts: @escaping () -> TrayFacts, perform: @escaping (UserRequest?) -> Void,
         activate: @escaping () -> Void, log: @escaping (String) -> Void) {
        self.connection = connection
        self.facts = facts
        self.perform = perform
        self.activate = activate
        self.log = log
    }

    /// Exports the item and its menu, claims the item's name, and registers
    /// with every watcher that appears (the same again on a new connection).
    func start(on connection: Connection? = nil) {
        if let connection { self.connection = connection }
        let current = facts()
        look = TrayModel.look(current, localize: Localization.localizer)
        menu = TrayModel.menu(current, localize: Localization.localizer)
        self.connection.export([itemInterface()], at: Self.itemPath)
        self.connection.export([menuInterface()], at: Self.menuPath)
        self.connection.requestName(name) { [log, name] reply in
            if case .failure(let error) = reply { log("the tray icon cannot claim \(name): \(error.message)") }
        }
        watcherToken = self.connection.watchName(Self.watcherName) { [weak self] owner in
            guard let self, owner != nil else { return }
            self.registrationAttempts = 0
            self.register()
        }
    }

    /// Emits what changed since the last look and menu.
    func refresh() {
        let current = facts()
        let fresh = TrayModel.look(current, localize: Localization.localizer)
        let freshMenu = TrayModel.menu(current, localize: Localization.localizer)
        if let old = look {
            // Every New* signal whose property changed: LXQt shows the attention
            // icon while NeedsAttention and reads it again only on NewAttentionIcon.
            if old.status != fresh.status { emit("NewStatus", [.string(fresh.status)]) }
            if old.tooltipBody != fresh.tooltipBody || old.tooltipTitle != fresh.tooltipTitle { emit("NewToolTip") }
            if old.iconName != fresh.iconName {
                emit("NewIcon")
                emit("NewAttentionIcon")
                // Again a moment later: Debian 12's gtk-sni-tray host reads
                // IconPixmap, redraws, and only then reads IconName, so the
                // first signal redraws the old icon; the second redraws with
                // the name the first one read. (One wake-up per icon change.)
                let again = iconAgain ?? connection.loop.makeTimer { [weak self] in self?.emit("NewIcon") }
                iconAgain = again
                again.arm(after: .milliseconds(300))
            }
        }
        look = fresh
        if freshMenu != menu {
            menu = freshMenu
            revision &+= 1
            emitMenu("LayoutUpdated", [.uint32(revision), .int32(0)])
        }
    }

    private func register() {
        registrationAttempts += 1
        connection.call(.methodCall(
            destination: Self.watcherName, path: Self.watcherPath, interface: Self.watcherName,
            member: "RegisterStatusNotifierItem", body: [.string(connection.uniqueName)])
        ) { [weak self] reply in
            guard let self, case .failure(let error) = reply else { return }
            guard self.registrationAttempts < Self.registrationAttemptLimit else {
                return self.log("the tray's watcher refused the icon: \(error.message)")
            }
            let retry = self.registrationRetry ?? self.connection.loop.makeTimer { [weak self] in self?.register() }
            self.registrationRetry = retry
            retry.arm(after: .seconds(1))
        }
    }

    private func emit(_ member: String, _ body: [Value] = []) {
        try? connection.emit(path: Self.itemPath, interface: Self.itemInterface, member: member, body: body)
    }

    private func emitMenu(_ member: String, _ body: [Value]) {
        try? connection.emit(path: Self.menuPath, interface: Self.menuInterface, member: member, body: body)
    }

    // MARK: org.kde.StatusNotifierItem

    private func itemInterface() -> Interface {
        func current() -> TrayLook { TrayModel.look(facts(), localize: Localization.localizer) }
        let noPixmaps = Value.array(element: "(iiay)", [])
        return Interface(
            name: Self.itemInterface,
            methods: [
                .init("Activate", input: "ii") { [weak self] _ in self?.activate(); return [] },
                .init("SecondaryActivate", input: "ii") { [weak self] _ in self?.activate(); return [] },
                // The host shows the menu itself (`Menu`); nothing to do here.
                .init("ContextMenu", input: "ii") { _ in [] },
                .init("Scroll", input: "is") { _ in [] },
            ],
            properties: [
                .init("Category", signature: "s") { .string("SystemServices") },
                .init("Id", signature: "s") { .string(ControlNames.busName) },
                .init("Title", signature: "s") { .string("CC Relay") },
                .init("Status", signature: "s") { .string(current().status) },
                .init("WindowId", signature: "i") { .int32(0) },
                .init("IconName", signature: "s") { .string(current().iconName) },
                .init("IconPixmap", signature: "a(iiay)") { noPixmaps },
                .init("OverlayIconName", signature: "s") { .string("") },
                .init("OverlayIconPixmap", signature: "a(iiay)") { noPixmaps },
                .init("AttentionIconName", signature: "s") { .string(current().iconName) },
                .init("AttentionIconPixmap", signature: "a(iiay)") { noPixmaps },
                .init("AttentionMovieName", signature: "s") { .string("") },
                .init("IconThemePath", signature: "s") { .string(Self.iconThemePath) },
                .init("ToolTip", signature: "(sa(iiay)ss)") {
                    let look = current()
                    return .structure([.string(look.iconName), noPixmaps, .string(look.tooltipTitle), .string(look.tooltipBody)])
                },
                .init("ItemIsMenu", signature: "b") { .boolean(false) },
                .init("Menu", signature: "o") { .objectPath(Self.menuPath) },
            ],
            signals: [
                .init("NewTitle"), .init("NewIcon"), .init("NewAttentionIcon"), .init("NewOverlayIcon"), .init("NewToolTip"),
                .init("NewStatus", signature: "s"),
            ])
    }

    /// Where the package's icons are: beside a build (`icons/`), or the
    /// install prefix's `share/icons` (from bin/ or libexec/ccrelay/).
    static let iconThemePath: String = {
        guard let folder = ExecutableLocation.directory else { return "" }
        for candidate in [folder + "/icons", folder + "/../share/icons", folder + "/../../share/icons"]
        where access(candidate + "/hicolor", F_OK) == 0 {
            return candidate
        }
        return ""
    }()

    // MARK: com.canonical.dbusmenu

    private func menuInterface() -> Interface {
        Interface(
            name: Self.menuInterface,
            methods: [
                .init("GetLayout", input: "iias", output: "u(ia{sv}av)") { [weak self] message throws(DBusError) in
                    guard let self else { return [] }
                    let parent: Int32 = try message.argument(0)
                    return [.uint32(self.revision), self.layout(of: parent)]
                },
                .init("GetGroupProperties", input: "aias", output: "a(ia{sv})") { [weak self] message throws(DBusError) in
                    guard let self else { return [] }
                    let ids: [Int32] = try message.argument(0)
                    let wanted = ids.isEmpty ? [0] + self.menu.map(\.id) : ids
                    var entries = self.menu.filter { wanted.contains($0.id) }.map { Value.structure([.int32($0.id), Self.properties($0)]) }
                    if wanted.contains(0) { entries.insert(.structure([.int32(0), Self.rootProperties]), at: 0) }
                    return [.array(element: "(ia{sv})", entries)]
                },
                .init("GetProperty", input: "is", output: "v") { [weak self] message throws(DBusError) in
                    let id: Int32 = try message.argument(0)
                    let property: String = try message.argument(1)
                    guard let properties = id == 0 ? Self.rootProperties : self?.menu.first(where: { $0.id == id }).map(Self.properties),
                        case .dictionary(_, _, let entries) = properties,
                        let found = entries.first(where: { $0.key == .string(property) })
                    else { throw DBusError(.invalidArgs, "no property \(property) on menu item \(id)") }
                    return [found.value]
                },
                .init("Event", input: "isvu") { [weak self] message throws(DBusError) in
                    let id: Int32 = try message.argument(0)
                    let event: String = try message.argument(1)
                    guard event == "clicked", let self, let item = self.menu.first(where: { $0.id == id }), item.enabled else { return [] }
                    self.perform(item.action)
                    return []
                },
                .init("EventGroup", input: "a(isvu)", output: "ai") { [weak self] message throws(DBusError) in
                    guard case .array(_, let events)? = message.body.first else { return [.array(element: "i", [])] }
                    var unknown: [Value] = []
                    for case .structure(let fields) in events where fields.count == 4 {
                        guard case .int32(let id) = fields[0], case .string(let event) = fields[1] else { continue }
                        // A host may send the menu's id (0) or an entry's; an id the menu lacks is reported back.
                        guard let self, let item = self.menu.first(where: { $0.id == id }) else { unknown.append(.int32(id)); continue }
                        if event == "clicked" && item.enabled { self.perform(item.action) }
                    }
                    return [.array(element: "i", unknown)]
                },
                .init("AboutToShow", input: "i", output: "b") { [weak self] _ in
                    self?.refresh()
                    return [.boolean(false)]
                },
                .init("AboutToShowGroup", input: "ai", output: "aiai") { [weak self] _ in
                    self?.refresh()
                    return [.array(element: "i", []), .array(element: "i", [])]
                },
            ],
            properties: [
                .init("Version", signature: "u") { .uint32(3) },
                .init("TextDirection", signature: "s") { .string("ltr") },
                .init("Status", signature: "s") { .string("normal") },
                .init("IconThemePath", signature: "as") { .array(element: "s", [.string(Self.iconThemePath)]) },
            ],
            signals: [
                .init("ItemsPropertiesUpdated", signature: "a(ia{sv})a(ias)"), .init("LayoutUpdated", signature: "ui"),
                .init("ItemActivationRequested", signature: "iu"),
            ])
    }

    /// The layout under `parent`: the root (0) holds every entry; entries have no children.
    private func layout(of parent: Int32) -> Value {
        func node(_ id: Int32, _ properties: Value, _ children: [Value]) -> Value {
            .structure([.int32(id), properties, .array(element: "v", children.map { .variant($0) })])
        }
        if let item = menu.first(where: { $0.id == parent }) { return node(item.id, Self.properties(item), []) }
        return node(0, Self.rootProperties, menu.map { node($0.id, Self.properties($0), []) })
    }

    /// The root item (id 0): it holds the menu.
    static let rootProperties = Value.dictionary(key: "s", value: "v", [DictEntry(.string("children-display"), .variant(.string("submenu")))])

    /// An entry's dbusmenu properties: a separator's type; an entry's label and, always,
    /// whether it is enabled. The spec lets a default go unsaid, but GNOME's AppIndicator
    /// extension and Plasma (libdbusmenu-qt) keep a property's old value when a new layout
    /// leaves it out: "Clear badge", disabled at 0, stayed disabled once alerts came.
    static func properties(_ item: TrayMenuItem) -> Value {
        var entries: [DictEntry] = []
        if item.isSeparator {
            entries.append(DictEntry(.string("type"), .variant(.string("separator"))))
        } else {
            entries.append(DictEntry(.string("label"), .variant(.string(item.label))))
            entries.append(DictEntry(.string("enabled"), .variant(.boolean(item.enabled))))
        }
        return .dictionary(key: "s", value: "v", entries)
    }
}
