import Foundation
import TestSupport
import Testing

/// The tray icon on the panels people use (issue 21): xfce4-panel 4.18's
/// systray plugin and lxqt-panel 1.2's statusnotifier plugin, each on a display
/// and bus of the test's own with a configuration of just that plugin. The
/// screenshot (in .build/debug/test-artifacts) must show the online icon
/// while online — XFCE hides Passive items — and the red logged-out icon
/// within a few seconds of a kick — LXQt re-reads the attention icon only on
/// NewAttentionIcon.
@Suite(.desktopBudget) struct DesktopPanelTests {
    static let artifacts = buildProductsDirectory.appendingPathComponent("test-artifacts").path

    enum Panel: String, CaseIterable, Sendable {
        case xfce, lxqt

        var program: String { self == .xfce ? "/usr/bin/xfce4-panel" : "/usr/bin/lxqt-panel" }
        /// No window manager runs on the test's display.
        var arguments: [String] { self == .xfce ? ["--disable-wm-check"] : [] }
        /// XFCE's settings daemon, which the panel reads its configuration from (D-Bus activated on a desktop).
        static let xfconfd: String = {
            let multiarch = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib")) ?? []
            return multiarch.map { "/usr/lib/\($0)/xfce4/xfconf/xfconfd" }.first(where: FileManager.default.isExecutableFile) ?? "xfconfd"
        }()

        /// Writes the panel's configuration (one panel at the top, only the tray plugin) under `config`.
        func configure(_ config: String) throws {
            switch self {
            case .xfce:
                let folder = config + "/xfce4/xfconf/xfce-perchannel-xml"
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                try """
                    <?xml version="1.0" encoding="UTF-8"?>
                    <channel name="xfce4-panel" version="1.0">
                      <property name="configver" type="int" value="2"/>
                      <property name="panels" type="array">
                        <value type="int" value="1"/>
                        <property name="panel-1" type="empty">
                          <property name="position" type="string" value="p=6;x=0;y=0"/>
                          <property name="length" type="uint" value="100"/>
                          <property name="position-locked" type="bool" value="true"/>
                          <property name="size" type="uint" value="48"/>
                          <property name="icon-size" type="uint" value="32"/>
                          <property name="plugin-ids" type="array">
                            <value type="int" value="1"/>
                          </property>
                        </property>
                      </property>
                      <property name="plugins" type="empty">
                        <property name="plugin-1" type="string" value="systray"/>
                      </property>
                    </channel>
                    """.write(toFile: folder + "/xfce4-panel.xml", atomically: true, encoding: .utf8)
            case .lxqt:
                let folder = config + "/lxqt"
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                try """
                    [General]
                    __userfile__=true
                    panels=panel1

                    [panel1]
                    plugins=statusnotifier
                    position=Top
                    panelSize=48
                    iconSize=32
                    desktop=0
                    hidable=false

                    [statusnotifier]
                    type=statusnotifier
                    """.write(toFile: folder + "/panel.conf", atomically: true, encoding: .utf8)
            }
        }
    }

    @Test(arguments: Panel.allCases)
    func thePanelShowsTheIconOfTheState(_ panel: Panel) async throws {
        try #require(FileManager.default.isExecutableFile(atPath: panel.program), "\(panel.program) is missing: scripts/bootstrap installs it")
        try FileManager.default.createDirectory(atPath: Self.artifacts, withIntermediateDirectories: true)
        let display = try PrivateDisplay()
        let rig = try await DaemonRig(extraConfig: "auto-relogin = false")
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("panel-\(UUID().uuidString)").path
        try panel.configure(folder + "/config")
        let environment = rig.bus.environment.merging([
            "DISPLAY": display.name, "GDK_BACKEND": "x11", "QT_QPA_PLATFORM": "xcb", "NO_AT_BRIDGE": "1",
            "XDG_CONFIG_HOME": folder + "/config", "XDG_CACHE_HOME": folder + "/cache", "XDG_RUNTIME_DIR": folder,
            "HOME": folder, "XDG_CURRENT_DESKTOP": panel == .xfce ? "XFCE" : "LXQt",
        ]) { $1 }
        let settings = panel == .xfce
            ? try ChildProcess(Panel.xfconfd, [], environment: environment, outputFiles: (folder + "/xfconfd.out", folder + "/xfconfd.err"))
            : nil
        defer { settings?.stop() }
        if panel == .xfce { #expect(try await rig.bus.waitForName("org.xfce.Xfconf")) }
        // The panel under test is the host, not ccrelay: one that could not start (a loaded runner
        // once had xfce4-panel fail to open a display that was there) is started again, twice at most.
        func startPanel() throws -> ChildProcess {
            try ChildProcess(panel.program, panel.arguments, environment: environment,
                             outputFiles: (folder + "/panel.out", folder + "/panel.err"))
        }
        var host = try startPanel()
        var restarts = 0
        defer { host.stop() }
        func keepLogs() {
            for log in ["panel.out", "panel.err"] {
                let kept = Self.artifacts + "/\(panel.rawValue)-\(log)"
                try? FileManager.default.removeItem(atPath: kept)
                try? FileManager.default.copyItem(atPath: folder + "/" + log, toPath: kept)
            }
        }
        defer {
            keepLogs()
            try? FileManager.default.removeItem(atPath: folder)
        }
        let blue = (28, 110, 212), red = (198, 40, 40)
        let online = Self.artifacts + "/\(panel.rawValue)-online.png", loggedOut = Self.artifacts + "/\(panel.rawValue)-logged-out.png"
        var shot = try display.screenshot(savingTo: online)
        // Not too often: xwd grabs the X server while it copies the screen, and the panel must draw.
        #expect(await eventually(timeout: .seconds(60), interval: .milliseconds(500)) {
            if !host.isRunning, restarts < 2, let again = try? startPanel() {
                restarts += 1
                host = again
            }
            shot = (try? display.screenshot(savingTo: online)) ?? shot
            return shot.count(red: blue.0, green: blue.1, blue: blue.2) > 150
        }, "the online icon (blue) in \(online); panel restarts \(restarts); \(rig.log)")
        #expect(shot.count(red: red.0, green: red.1, blue: red.2) < 50)

        try rig.sim.control("POST", "kick")
        #expect(await eventually(timeout: .seconds(20), interval: .milliseconds(500)) {
            shot = (try? display.screenshot(savingTo: loggedOut)) ?? shot
            return shot.count(red: red.0, green: red.1, blue: red.2) > 150 && shot.count(red: blue.0, green: blue.1, blue: blue.2) < 50
        }, "the logged-out icon (red) replaces it: \(loggedOut)")
        rig.daemon.stop()
    }
}
