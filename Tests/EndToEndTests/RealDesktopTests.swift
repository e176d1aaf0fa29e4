import Foundation
import TestSupport
import Testing

/// The built ccrelay under the real GNOME Shell 43 (AppIndicator, Dash to Dock)
/// and KDE Plasma 5.27 (issue 33), each headless in a Debian 12 chroot of its own
/// (`scripts/desktops/build-chroot` makes them; CI always, `make test` when they
/// are there). What the shell shows is read from the shell: the tray icon and its
/// state, its menu opened and clicked with the real pointer, the logout bubble's
/// text in English and Chinese, and the dock's count badge. Screenshots in
/// .build/debug/test-artifacts (`gnome-*.png`, `kde-*.png`). One desktop at a time:
/// each test starts its chroot's desktop afresh.
@Suite(.serialized, .enabled(if: RealDesktop.available,
    "needs root and the desktop chroots: sudo scripts/desktops/build-chroot (once: about 5 min and 3 GB)"))
struct RealDesktopTests {
    static func isBlue(_ r: Int, _ g: Int, _ b: Int) -> Bool { b > 150 && b > r + 90 && b > g + 50 }
    static func isRed(_ r: Int, _ g: Int, _ b: Int) -> Bool { r > 150 && r > g + 90 && r > b + 90 }
    /// Text compared as the shells lay it out: Plasma's AT-SPI text shows a line break as a space.
    static func words(_ text: String) -> String { text.split(whereSeparator: \.isWhitespace).joined(separator: " ") }

    /// Starts `kind`'s desktop and the daemon in it (in `language`), runs `body` once the
    /// daemon is online, and ends both.
    func online(_ kind: RealDesktop.Kind, language: String = "en_US.UTF-8",
                _ body: (RealDesktop, DesktopRelay) async throws -> Void) async throws {
        let desktop = try RealDesktop(kind)
        defer { desktop.shutDown() }
        let relay = try await DesktopRelay(in: desktop, language: language)
        defer { relay.stop() }
        try #require(await eventually(timeout: .seconds(60)) { relay.status()["state"] as? String == "online" }, "\(relay.log)")
        try await body(desktop, relay)
    }

    /// Expects the shell to show the bubble `title` with `body`; a screenshot as `picture`.
    func expectBubble(_ desktop: RealDesktop, _ title: String, _ body: String, picture: String) async throws {
        var bubbles: [(title: String, body: String)] = []
        #expect(await eventually(timeout: .seconds(60), interval: .milliseconds(500)) {
            bubbles = (try? desktop.bubbles()) ?? []
            return bubbles.contains { $0.title == title && Self.words($0.body) == Self.words(body) }
        }, "the bubble “\(title)”: \(bubbles)")
        try desktop.screenshot(picture)
    }

    /// Waits until the tray icon says `state` (GNOME: the icon file the shell drew; Plasma:
    /// the tooltip's first line) and its box in a screenshot is mostly `colour`, not `other`.
    func expectTray(_ desktop: RealDesktop, icon state: String, tooltip: String, colour: (Int, Int, Int) -> Bool,
                    not other: (Int, Int, Int) -> Bool) async {
        var tray: RealDesktop.Tray?
        let shown = await eventually(timeout: .seconds(60), interval: .milliseconds(500)) {
            tray = try? desktop.tray()
            guard let tray, let shot = try? desktop.screenshot(state) else { return false }
            let told = desktop.kind == .gnome
                ? tray.iconFile?.contains("/io.github.ccrelay.CCRelay-\(state).") == true
                : tray.tooltip?.hasPrefix(tooltip + "\n") == true
            return told && desktop.pixels(of: tray, in: shot, where: colour) > 20 && desktop.pixels(of: tray, in: shot, where: other) < 5
        }
        #expect(shown, "the \(state) icon in the tray: \(String(describing: tray)); \(RealDesktop.artifacts)/\(desktop.kind.rawValue)-\(state).png")
    }

    /// Online, the tray shows the online icon (blue; GNOME draws the installed
    /// `…CCRelay-online` icon, Plasma's tooltip says "Online (127.0.0.1)"); after a kick
    /// the logged-out icon (red), and the logout bubble with its English title and body.
    @Test(arguments: RealDesktop.Kind.allCases)
    func theTrayIconShowsTheStateAndTheLogoutBubbleItsText(_ kind: RealDesktop.Kind) async throws {
        try await online(kind) { desktop, relay in
            await expectTray(desktop, icon: "online", tooltip: "Online (127.0.0.1)", colour: Self.isBlue, not: Self.isRed)
            try relay.sim.control("POST", "kick", ["message": "你已被管理员下线"])
            await expectTray(desktop, icon: "logged-out", tooltip: "Logged out", colour: Self.isRed, not: Self.isBlue)
            try await expectBubble(desktop, "Logged out of the campus network",
                                   "Your login was cancelled, please log in again.\n你已被管理员下线", picture: "logout-bubble")
        }
    }

    /// The same bubble in Chinese (the daemon under LANG=zh_CN.UTF-8, the
    /// catalogue's exact strings), and the tray's text in Chinese too.
    @Test(arguments: RealDesktop.Kind.allCases)
    func theLogoutBubbleInChinese(_ kind: RealDesktop.Kind) async throws {
        try await online(kind, language: "zh_CN.UTF-8") { desktop, relay in
            #expect(await eventually(timeout: .seconds(60), interval: .milliseconds(500)) { (try? desktop.tray()) != nil })
            try relay.sim.control("POST", "kick", ["message": "你已被管理员下线"])
            try await expectBubble(desktop, "已退出校园网", "登录已被注销，请重新登录。\n你已被管理员下线", picture: "logout-bubble-zh_CN")
            // The state as the tray says it: GNOME holds the menu's labels, Plasma shows the tooltip.
            var tray: RealDesktop.Tray?
            #expect(await eventually(timeout: .seconds(30), interval: .milliseconds(500)) {
                tray = try? desktop.tray()
                return kind == .gnome ? tray?.menuLabels.first == "已注销" : tray?.tooltip?.hasPrefix("已注销\n") == true
            }, "the tray in Chinese: \(String(describing: tray))")
        }
    }

    /// After a notice and a kick the dock's CC Relay launcher shows 2; the tray's menu,
    /// opened with a real click, has "Clear badge (2)", and clicking it acknowledges both
    /// alerts (the daemon's badge is 0) and the dock shows no badge.
    @Test(arguments: RealDesktop.Kind.allCases)
    func theMenuClearsTheBadgeTheDockShows(_ kind: RealDesktop.Kind) async throws {
        try await online(kind) { desktop, relay in
            #expect(try desktop.dockIcon() != nil, "CC Relay is pinned to the dock")
            // A notice comes with a keep-alive's answer, so it goes first; then the kick.
            try relay.sim.control("POST", "notice", ["id": "maintenance-42", "title": "网络维护通知", "body": "今晚 23:00 维护", "urgency": "normal"])
            #expect(await eventually(timeout: .seconds(60)) { relay.status()["badge"] as? Int == 1 }, "\(relay.status())")
            try relay.sim.control("POST", "kick", ["message": "你已被管理员下线"])
            #expect(await eventually(timeout: .seconds(60)) { relay.status()["badge"] as? Int == 2 }, "\(relay.status())")

            var dock: RealDesktop.DockIcon?
            #expect(await eventually(timeout: .seconds(60), interval: .milliseconds(500)) {
                dock = try? desktop.dockIcon()
                return dock?.badge == "2"
            }, "the dock's badge: \(String(describing: dock))")
            try desktop.screenshot("dock-badge")

            var tray: RealDesktop.Tray?
            #expect(await eventually(timeout: .seconds(30), interval: .milliseconds(500)) {
                tray = try? desktop.tray()
                return tray != nil
            })
            let entries = try await desktop.openTrayMenu(try #require(tray))
            try desktop.screenshot("menu")
            let clear = try #require(entries.first { $0.label.hasPrefix("Clear badge") }, "the menu: \(entries.map(\.label))")
            #expect(clear.label == "Clear badge (2)", "\(entries.map(\.label))")
            if kind == .gnome { #expect(clear.clickable == true, "Clear badge can be clicked: \(entries)") }
            try desktop.click(x: clear.x, y: clear.y)

            #expect(await eventually(timeout: .seconds(30)) { relay.status()["badge"] as? Int == 0 }, "\(relay.status()); \(relay.log)")
            #expect(await eventually(timeout: .seconds(60), interval: .milliseconds(500)) {
                dock = try? desktop.dockIcon()
                return dock != nil && dock?.badge == nil
            }, "the dock shows no badge: \(String(describing: dock))")
            try desktop.screenshot("badge-cleared")
        }
    }
}
