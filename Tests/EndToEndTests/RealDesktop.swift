import Foundation
import TestSupport
import Testing

/// A real desktop shell running headless in a Debian 12 chroot of its own
/// (`scripts/desktops`): GNOME Shell 43 with the AppIndicator and Dash to
/// Dock extensions, or KDE Plasma 5.27. The built ccrelay is installed in it
/// as `make install` would (`/usr/local`, with its desktop entry, icons and
/// catalogues), and what the shell shows is read from the shell itself:
/// GNOME's through `org.gnome.Shell.Eval`, Plasma's through AT-SPI, and
/// Plasma's tray menu (a QMenu, not in AT-SPI) with tesseract. Clicks are
/// real X pointer clicks (xdotool). Everything runs as the chroot's user
/// `student`; `shutDown()` ends every process whose root is the chroot and
/// unmounts it.
final class RealDesktop: Sendable {
    enum Kind: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case gnome, kde
        var testDescription: String { self == .gnome ? "GNOME Shell 43" : "KDE Plasma 5.27" }
    }

    let kind: Kind
    /// The chroot, on the host.
    let root: String
    /// `:N`, the desktop's X display: the host reaches it too (Xvfb's abstract socket).
    let display: String
    private let stopped = LockedBox(false)

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    static let session = repository + "/scripts/desktops/session"
    /// Where `session up` copies Tests/Fixtures/desktops in the chroot.
    static let fixtures = "/opt/ccrelay-desktop"
    static let artifacts = buildProductsDirectory.appendingPathComponent("test-artifacts").path

    /// The tests run as root (chroot, mounts) with both chroots built from the current package lists;
    /// on CI always (a missing chroot fails them).
    static let available: Bool = {
        if ProcessInfo.processInfo.environment["CI"] == "true" { return true }
        guard getuid() == 0 else { return false }
        return Kind.allCases.allSatisfy { (try? TestSupport.run(repository + "/scripts/desktops/build-chroot", ["--check", $0.rawValue]))?.status == 0 }
    }()

    /// Starts the desktop (about 10 s for GNOME, 15 s for Plasma) and returns once its tray,
    /// notification server and dock are there, with CC Relay pinned to the dock.
    init(_ kind: Kind) throws {
        self.kind = kind
        root = URL(fileURLWithPath: Self.repository + "/.build/desktops/" + kind.rawValue).resolvingSymlinksInPath().path
        try FileManager.default.createDirectory(atPath: Self.artifacts, withIntermediateDirectories: true)
        // A shell that is not up after its two minutes (seen once in CI, with the whole suite beside it
        // on two cores: GNOME Shell's Eval never came) gets a second start; its log is in the error.
        var failure = ""
        for _ in 1...2 {
            let up = try TestSupport.run(Self.session, ["up", kind.rawValue, buildProductsDirectory.path])
            if up.status == 0, let environment = try? String(contentsOfFile: root + "/tmp/desktop/env", encoding: .utf8),
                let line = environment.split(separator: "\n").first(where: { $0.hasPrefix("DISPLAY=") }) {
                display = String(line.dropFirst("DISPLAY=".count))
                return
            }
            _ = try? TestSupport.run(Self.session, ["down", kind.rawValue])
            failure = up.standardOutput + up.standardError
        }
        throw TestSetupError("the \(kind) desktop did not start, twice: \(failure)")
    }

    /// Ends every process in the chroot and unmounts it (once).
    func shutDown() {
        guard !stopped.get() else { return }
        stopped.set(true)
        let down = try? TestSupport.run(Self.session, ["down", kind.rawValue])
        if down?.status != 0 { Issue.record("session down \(kind): \(down?.standardError ?? "did not run")") }
    }

    deinit { shutDown() }

    /// Runs `command` to its end in the chroot, as the desktop's user in its session; `environment` is added.
    func run(_ command: [String], environment: [String: String] = [:]) throws -> CommandResult {
        try TestSupport.run(Self.session, ["run", kind.rawValue] + environment.map { "\($0.key)=\($0.value)" } + command)
    }

    /// Starts `command` in the chroot like `run`, its output in `log` (`log`.out and `log`.err) under the chroot's /tmp/desktop.
    func start(_ command: [String], environment: [String: String] = [:], log: String) throws -> ChildProcess {
        try ChildProcess(Self.session, ["run", kind.rawValue] + environment.map { "\($0.key)=\($0.value)" } + command,
                         outputFiles: (root + "/tmp/desktop/\(log).out", root + "/tmp/desktop/\(log).err"))
    }

    /// The whole screen, saved in .build/debug/test-artifacts as `kind-name.png`.
    @discardableResult
    func screenshot(_ name: String) throws -> Screenshot {
        try Screenshot(display: display, savingTo: Self.artifacts + "/\(kind.rawValue)-\(name).png")
    }

    /// A real click of pointer `button` at `x`, `y`.
    func click(x: Int, y: Int, button: Int = 1) throws {
        let clicked = try run(["xdotool", "mousemove", "\(x)", "\(y)", "click", "\(button)"])
        guard clicked.status == 0 else { throw TestSetupError("xdotool: \(clicked.standardError)") }
    }

    // MARK: What the shell shows

    /// CC Relay's icon in the tray: where it is, and what the shell took from the item —
    /// GNOME: the icon file it drew (the AppIndicator extension shows no tooltip);
    /// Plasma: the tooltip's body (AT-SPI's description of the tray button).
    struct Tray: Sendable {
        var x: Int, y: Int, width: Int, height: Int
        var iconFile: String?
        var tooltip: String?
        /// GNOME: the menu's labels as the shell holds them (the menu need not be open).
        var menuLabels: [String]
        var centre: (x: Int, y: Int) { (x + width / 2, y + height / 2) }
    }

    func tray() throws -> Tray? {
        switch kind {
        case .gnome:
            guard let icon = try gnomeList("gnome-tray.js").first(where: { $0["title"] as? String == "CC Relay" }),
                icon["visible"] as? Bool == true, let x = icon["x"] as? Int, let y = icon["y"] as? Int
            else { return nil }
            let labels = (icon["items"] as? [[String: Any]] ?? []).compactMap { $0["label"] as? String }.filter { !$0.isEmpty }
            return Tray(x: x - 12, y: y - 12, width: 24, height: 24, iconFile: icon["icon"] as? String, menuLabels: labels)
        case .kde:
            // The tray is the panel's right half; the task manager's launcher of the same name is on the left.
            guard let button = try accessibles().first(where: { $0.role == "push button" && $0.name == "CC Relay" && $0.x > 640 })
            else { return nil }
            return Tray(x: button.x, y: button.y, width: button.width, height: button.height, tooltip: button.description, menuLabels: [])
        }
    }

    /// Pixels of the tray icon's box in `shot` that `matches`.
    func pixels(of tray: Tray, in shot: Screenshot, where matches: (Int, Int, Int) -> Bool) -> Int {
        shot.count(x: tray.x, y: tray.y, width: tray.width, height: tray.height, where: matches)
    }

    /// The notification bubbles the shell holds: GNOME, every notification in the message tray
    /// (each stays until dismissed) with the banner's on top; Plasma, the popups on screen.
    func bubbles() throws -> [(title: String, body: String)] {
        switch kind {
        case .gnome:
            let tray = try gnome("gnome-notifications.js") as? [String: Any] ?? [:]
            var found: [(String, String)] = []
            if let banner = tray["banner"] as? [String: Any], banner["mapped"] as? Bool == true {
                found.append((banner["title"] as? String ?? "", banner["body"] as? String ?? ""))
            }
            for source in tray["sources"] as? [[String: Any]] ?? [] {
                for note in source["notifications"] as? [[String: Any]] ?? [] {
                    found.append((note["title"] as? String ?? "", note["body"] as? String ?? ""))
                }
            }
            return found
        case .kde:
            let nodes = try accessibles()
            return nodes.filter { $0.role == "notification" }.map { popup in
                let body = nodes.first { $0.role == "text" && popup.contains($0) }
                return (popup.name, body?.name ?? "")
            }
        }
    }

    /// CC Relay's launcher in the dock (GNOME: Dash to Dock; Plasma: the task manager),
    /// and its badge's text (nil when no badge is shown).
    struct DockIcon: Sendable {
        var badge: String?
    }

    /// CC Relay's launcher in the dock; nil when it is not there.
    func dockIcon() throws -> DockIcon? {
        switch kind {
        case .gnome:
            guard let icon = try gnomeList("gnome-dock.js").first(where: {
                $0["app"] as? String == "io.github.ccrelay.CCRelay.desktop" && $0["mapped"] as? Bool == true
            }) else { return nil }
            let shown = (icon["badges"] as? [[String: Any]] ?? []).first { $0["shown"] as? Bool == true }
            return DockIcon(badge: shown?["text"] as? String)
        case .kde:
            let nodes = try accessibles()
            guard let launcher = nodes.first(where: { $0.role == "push button" && $0.name == "CC Relay" && $0.x < 640 }) else { return nil }
            let badge = nodes.first { $0.role == "label" && launcher.contains($0) && $0.name.allSatisfy(\.isNumber) }
            return DockIcon(badge: badge?.name)
        }
    }

    /// One entry of the tray's menu as the shell shows it, with its centre on screen.
    struct MenuEntry: Sendable {
        var label: String
        var x: Int, y: Int
        /// GNOME only (Plasma's menu is read from its picture).
        var clickable: Bool?
    }

    /// Opens the tray icon's menu with a real click (GNOME: the left button, as the
    /// AppIndicator extension opens menus; Plasma: the right one, its left one activates
    /// the item) and returns its entries once it is open (empty when it did not open).
    func openTrayMenu(_ tray: Tray) async throws -> [MenuEntry] {
        switch kind {
        case .gnome:
            try click(x: tray.centre.x, y: tray.centre.y)
            var entries: [MenuEntry] = []
            _ = await eventually(timeout: .seconds(10), interval: .milliseconds(300)) {
                guard let icon = try? self.gnomeList("gnome-tray.js").first(where: { $0["title"] as? String == "CC Relay" }),
                    icon["menuOpen"] as? Bool == true
                else { return false }
                entries = (icon["items"] as? [[String: Any]] ?? []).compactMap { item in
                    guard let label = item["label"] as? String, !label.isEmpty, item["mapped"] as? Bool == true,
                        let x = item["x"] as? Int, let y = item["y"] as? Int
                    else { return nil }
                    return MenuEntry(label: label, x: x, y: y, clickable: item["sensitive"] as? Bool)
                }
                return !entries.isEmpty
            }
            return entries
        case .kde:
            let read = try run(["python3", Self.fixtures + "/kde-menu.py", "\(tray.centre.x)", "\(tray.centre.y)"])
            let menu = try Self.json(read.standardOutput) as? [String: Any] ?? [:]
            return (menu["lines"] as? [[String: Any]] ?? []).compactMap { line in
                guard let label = line["text"] as? String, let x = line["x"] as? Int, let y = line["y"] as? Int else { return nil }
                return MenuEntry(label: label, x: x, y: y, clickable: nil)
            }
        }
    }

    // MARK: Readers

    private func gnomeList(_ query: String) throws -> [[String: Any]] { try gnome(query) as? [[String: Any]] ?? [] }

    /// Evaluates Tests/Fixtures/desktops/`query` in GNOME Shell; its value decoded from JSON.
    private func gnome(_ query: String) throws -> Any {
        let result = try run(["gjs", Self.fixtures + "/gnome-eval.js", Self.fixtures + "/" + query])
        guard result.status == 0 else { throw TestSetupError("Eval \(query): \(result.standardError)") }
        return try Self.json(result.standardOutput)
    }

    /// One accessible of plasmashell, showing and named.
    struct Accessible: Sendable {
        var role: String, name: String, description: String
        var x: Int, y: Int, width: Int, height: Int
        func contains(_ other: Accessible) -> Bool {
            other.x >= x && other.y >= y && other.x + other.width <= x + width && other.y + other.height <= y + height
        }
    }

    private func accessibles() throws -> [Accessible] {
        let dump = try run(["timeout", "30", "python3", Self.fixtures + "/kde-atspi.py"])
        guard dump.status == 0 else { throw TestSetupError("AT-SPI: \(dump.standardError)") }
        return dump.standardOutput.split(separator: "\n").compactMap { line in
            guard let node = try? Self.json(String(line)) as? [String: Any], let box = node["box"] as? [Int], box.count == 4 else { return nil }
            return Accessible(role: node["role"] as? String ?? "", name: node["name"] as? String ?? "",
                              description: node["description"] as? String ?? "", x: box[0], y: box[1], width: box[2], height: box[3])
        }
    }

    static func json(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }
}

/// ccsim and `ccrelay daemon` inside a desktop's chroot, as its user: the simulator over
/// mutual TLS with the test PKI (copied in), the daemon with the desktop's session bus
/// and `language`, its configuration where a student keeps it.
final class DesktopRelay: Sendable {
    let desktop: RealDesktop
    let sim: CCSimProcess
    let daemon: ChildProcess

    /// Returns once the daemon owns its bus name: a `ccrelay` command before that would
    /// have the bus start another daemon (the installed D-Bus service file), in the bus's language.
    init(in desktop: RealDesktop, language: String) async throws {
        self.desktop = desktop
        let home = desktop.root + "/home/student"
        let pki = TestPKI.shared
        try Self.place(home + "/pki", mode: 0o700, directory: true)
        for (source, name) in [(pki.caCertificate, "ca.pem"), (pki.serverCertificate, "server.pem"), (pki.serverKey, "server.key"),
                               (pki.clientCertificate, "client.pem"), (pki.clientKey, "client.key")] {
            try FileManager.default.copyItem(atPath: source, toPath: home + "/pki/" + name)
            try Self.place(home + "/pki/" + name, mode: name.hasSuffix(".key") ? 0o600 : 0o644)
        }
        sim = try CCSimProcess(command: [
            RealDesktop.session, "run", desktop.kind.rawValue, "/usr/local/bin/ccsim", "--tls-cert", "/home/student/pki/server.pem",
            "--tls-key", "/home/student/pki/server.key", "--client-ca", "/home/student/pki/ca.pem", "--interval", "2", "--timeout", "8",
        ])
        for folder in [home + "/.config", home + "/.config/ccrelay"] { try Self.place(folder, mode: 0o700, directory: true) }
        let configuration = home + "/.config/ccrelay/ccrelay.conf"
        try """
            [server]
            url = \(sim.url)
            ca-file = /home/student/pki/ca.pem
            [auth]
            certificate = /home/student/pki/client.pem
            key = /home/student/pki/client.key
            [probe]
            mode = off
            [keepalive]
            auto-relogin = false
            """.write(toFile: configuration, atomically: true, encoding: .utf8)
        try Self.place(configuration, mode: 0o600)
        daemon = try desktop.start(["/usr/local/bin/ccrelay", "daemon"], environment: ["LANG": language], log: "daemon")
        let owned = await eventually(timeout: .seconds(60), interval: .milliseconds(200)) {
            let asked = try? desktop.run(["gdbus", "call", "--session", "-d", "org.freedesktop.DBus", "-o", "/org/freedesktop/DBus",
                                          "-m", "org.freedesktop.DBus.NameHasOwner", "io.github.ccrelay.CCRelay"])
            return asked?.standardOutput.contains("true") == true
        }
        guard owned, daemon.isRunning else { throw TestSetupError("the daemon did not start: \(log)") }
    }

    /// Makes `path` the desktop user's, with `mode` (a folder first made when `directory`).
    private static func place(_ path: String, mode: mode_t, directory: Bool = false) throws {
        if directory && !FileManager.default.fileExists(atPath: path) { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false) }
        guard chown(path, 1000, 1000) == 0, chmod(path, mode) == 0 else { throw TestSetupError("cannot hand \(path) to the desktop's user") }
    }

    /// `ccrelay ARGUMENTS` in the desktop's session.
    func cli(_ arguments: [String]) throws -> CommandResult { try desktop.run(["/usr/local/bin/ccrelay"] + arguments) }

    /// `ccrelay status --json`, decoded (empty when it failed).
    func status() -> [String: Any] {
        guard let output = try? cli(["status", "--json"]).standardOutput else { return [:] }
        return (try? RealDesktop.json(output) as? [String: Any]) ?? [:]
    }

    /// What the daemon wrote to standard error.
    var log: String { (try? String(contentsOfFile: desktop.root + "/tmp/desktop/daemon.err", encoding: .utf8)) ?? "" }

    func stop() {
        daemon.stop()
        sim.stop()
    }
}
