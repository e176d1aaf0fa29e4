import Foundation
import TestSupport
import Testing

/// The dock badge on a real dock (issue 13): plank, on a display of the
/// test's own, with CC Relay pinned. Its count bubble (red) is found in the
/// screenshot: after alerts, again after plank restarts (it never asks; the
/// daemon announces when `com.canonical.Unity` gets an owner), and gone after
/// `ccrelay badge clear`. Screenshots in .build/debug/test-artifacts.
@Suite(.desktopBudget) struct PlankTests {
    static let artifacts = buildProductsDirectory.appendingPathComponent("test-artifacts").path

    @Test func plankShowsTheBadgeAgainAfterItRestartsAndBadgeClearRemovesIt() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/plank"), "plank is missing: scripts/bootstrap installs it")
        try FileManager.default.createDirectory(atPath: Self.artifacts, withIntermediateDirectories: true)
        let display = try PrivateDisplay(width: 640, height: 300)
        let rig = try await DaemonRig()
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")

        // A home of its own, with CC Relay's desktop entry pinned to the dock and its icons.
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("plank-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: home) }
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        let applications = home + "/data/applications"
        try FileManager.default.createDirectory(atPath: applications, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: home + "/data/icons", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: home + "/config/plank/dock1/launchers", withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: repository + "/packaging/io.github.ccrelay.CCRelay.desktop", toPath: applications + "/io.github.ccrelay.CCRelay.desktop")
        try FileManager.default.createSymbolicLink(atPath: home + "/data/icons/hicolor", withDestinationPath: repository + "/resources/icons/hicolor")
        try "[PlankDockItemPreferences]\nLauncher=file://\(applications)/io.github.ccrelay.CCRelay.desktop\n".write(
            toFile: home + "/config/plank/dock1/launchers/ccrelay.dockitem", atomically: true, encoding: .utf8)
        let environment = rig.bus.environment.merging([
            "DISPLAY": display.name, "HOME": home, "XDG_DATA_HOME": home + "/data", "XDG_CONFIG_HOME": home + "/config",
            "GDK_BACKEND": "x11", "NO_AT_BRIDGE": "1",
        ]) { $1 }
        func startPlank() throws -> ChildProcess {
            try ChildProcess("/usr/bin/plank", [], environment: environment, outputFiles: (home + "/plank.out", home + "/plank.err"))
        }
        /// Pixels of plank's red count bubble.
        func badgePixels(_ name: String) -> Int {
            guard let shot = try? display.screenshot(savingTo: Self.artifacts + "/" + name) else { return -1 }
            return shot.count(red: 226, green: 43, blue: 34, tolerance: 16)
        }

        var plank = try startPlank()
        #expect(await eventually(timeout: .seconds(20)) { (try? await rig.bus.waitForName("com.canonical.Unity", timeout: .seconds(1))) == true })
        for id in ["plank-1", "plank-2"] {
            _ = try rig.sim.control("POST", "notice", ["id": id, "title": "通知 \(id)", "body": "b", "urgency": "normal"])
        }
        #expect(await eventually(timeout: .seconds(20)) { (try? rig.cli(["badge"]).standardOutput)?.hasPrefix("2") == true })
        #expect(await eventually(timeout: .seconds(20), interval: .milliseconds(500)) { badgePixels("plank-badge.png") > 50 },
                "plank shows the count: \(Self.artifacts)/plank-badge.png")

        // The dock restarts: it asks nothing, and shows the count all the same.
        plank.stop()
        _ = plank.wait()
        #expect(badgePixels("plank-gone.png") < 10, "no dock, no badge")
        plank = try startPlank()
        defer { plank.stop() }
        #expect(await eventually(timeout: .seconds(20), interval: .milliseconds(500)) { badgePixels("plank-restarted.png") > 50 },
                "the restarted dock shows the count: \(Self.artifacts)/plank-restarted.png")

        #expect(try rig.cli(["badge", "clear"]).status == 0)
        #expect(await eventually(timeout: .seconds(20), interval: .milliseconds(500)) { badgePixels("plank-cleared.png") < 10 },
                "badge clear removes it: \(Self.artifacts)/plank-cleared.png")
    }
}
