import CCRelayCore
import CoreVocabulary
import Testing

/// The tray's look and menu for each state (issue 13): icon, Status, tooltip, entries.
@Suite struct TrayModelTests {
    func facts(_ state: DaemonState, unread: Int = 0, urgent: Bool = false, recent: [TrayFacts.RecentAlert] = [],
               problem: String = "") -> TrayFacts {
        TrayFacts(state: state, ip: "10.1.2.3", remaining: 125, problem: problem, unread: unread, urgent: urgent, recent: recent)
    }

    @Test func theIconAndStatusFollowTheState() throws {
        let expected: [(String, String, String)] = [
            ("online", "online", "Active"), ("sleeping", "online", "Active"), ("logging-in", "online", "Active"),
            ("failing", "failing", "Active"), ("logged-out", "logged-out", "Active"), ("offline", "logged-out", "Active"),
            ("no-network", "no-network", "Active"), ("unconfigured", "setup", "Active"),
        ]
        #expect(Set(expected.map(\.0)) == Set(DaemonState.allCases.map(\.rawValue)), "every state has its look")
        for (state, icon, status) in expected {
            let look = TrayModel.look(facts(try #require(DaemonState(rawValue: state))), localize: .english)
            #expect(look.iconName == "io.github.ccrelay.CCRelay-" + icon, "\(state)")
            #expect(look.status == status, "\(state)")
        }
    }

    /// issue 25: online is the server's word; the tooltip says when traffic does not get out.
    @Test func theTooltipSaysWhenOnlineHasNoWayOut() {
        var portal = facts(.online)
        portal.outside = .portal
        #expect(TrayModel.look(portal, localize: .english).tooltipBody.contains("No outside access: a login page (portal) answers"))
        var fine = facts(.online)
        fine.outside = .ok
        #expect(!TrayModel.look(fine, localize: .english).tooltipBody.contains("No outside access"))
        var failing = facts(.failing)
        failing.outside = .limited
        #expect(!TrayModel.look(failing, localize: .english).tooltipBody.contains("No outside access"), "only said while online")
    }

    /// issue 32: a Srun portal says how many devices the account has online; the tooltip says it while online.
    @Test func theTooltipSaysTheDevicesOnTheAccount() {
        var two = facts(.online, unread: 1)
        two.remaining = nil
        two.devices = 2
        #expect(TrayModel.look(two, localize: .english).tooltipBody == "Online (10.1.2.3)\n2 devices on the account\n1 unread alert")
        var one = facts(.online)
        one.devices = 1
        #expect(TrayModel.look(one, localize: .english).tooltipBody.contains("\n1 device on the account"), "one device, not one devices")
        #expect(!TrayModel.look(facts(.online), localize: .english).tooltipBody.contains("on the account"), "nothing said, nothing shown")
        var out = facts(.loggedOut)
        out.devices = 2
        #expect(!TrayModel.look(out, localize: .english).tooltipBody.contains("on the account"), "the last count is stale once logged out")
        // From the daemon's snapshot: the account's count, and no deadline for a portal that keeps none.
        var snapshot = DaemonSnapshot(state: .online, badge: BadgeState(count: 0, urgent: false), deadline: Instant(sinceBoot: .seconds(90_000)), ip: "10.1.2.3",
                                      account: AccountFacts(devices: 3))
        snapshot.serverProtocol = .srun
        let fromSnapshot = snapshot.trayFacts(at: Instant(sinceBoot: .seconds(100)))
        #expect(fromSnapshot.devices == 3 && fromSnapshot.remaining == nil, "\(fromSnapshot)")
        #expect(TrayModel.look(fromSnapshot, localize: .english).tooltipBody == "Online (10.1.2.3)\n3 devices on the account")
        snapshot.serverProtocol = .cc1
        #expect(snapshot.trayFacts(at: Instant(sinceBoot: .seconds(100))).remaining == 89_900, "CC/1 keeps its deadline")
    }

    @Test func anUnreadCriticalAlertNeedsAttentionInAnyState() {
        #expect(TrayModel.look(facts(.online, unread: 1, urgent: true), localize: .english).status == "NeedsAttention")
        #expect(TrayModel.look(facts(.loggedOut, unread: 2, urgent: true), localize: .english).status == "NeedsAttention")
        // Never Passive (issue 21): XFCE's systray hid the icon, and Log out, Clear badge and Quit with it.
        #expect(TrayModel.look(facts(.online, unread: 3, urgent: false), localize: .english).status == "Active")
        #expect(TrayModel.look(facts(.online), localize: .english).status == "Active")
    }

    @Test func theTooltipSaysTheStateTheTimeLeftTheProblemAndTheUnreadCount() {
        let online = TrayModel.look(facts(.online, unread: 2), localize: .english)
        // LXQt shows the title alone (issue 21): the state is in it.
        #expect(online.tooltipTitle == "CC Relay — Online (10.1.2.3)")
        #expect(online.tooltipBody == "Online (10.1.2.3)\n2 min 05 s left before the server logs this computer out\n2 unread alerts")
        #expect(TrayModel.look(facts(.online, unread: 1), localize: .english).tooltipBody.hasSuffix("\n1 unread alert"), "one alert, not one alerts")
        let out = TrayModel.look(facts(.loggedOut, problem: "The server refused the certificate."), localize: .english)
        #expect(out.tooltipBody == "Logged out\nThe server refused the certificate.")
    }

    @Test func theMenuHasTheStateLoginOrLogoutClearBadgeTheNewestAlertsSetUpAndQuit() {
        let recent = (1...7).map { TrayFacts.RecentAlert(id: Int64(100 - $0), title: "alert_\($0)", unread: $0 <= 2) }
        let menu = TrayModel.menu(facts(.online, unread: 2, recent: recent), localize: .english)
        let labels = menu.filter { !$0.isSeparator }.map(\.label)
        #expect(labels == ["Online (10.1.2.3)", "Log out", "Clear badge (2)", "● alert__1", "● alert__2", "    alert__3",
                           "    alert__4", "    alert__5", "Why it happened (timeline)…", "Set up…", "Quit CC Relay"])
        #expect(menu.first { $0.id == 9 }?.action == .showTimeline, "the alerts link to the timeline that says why")
        #expect(menu.first?.enabled == false, "the state line is not a button")
        #expect(menu.first { $0.label == "● alert__1" }?.action == .acknowledge(alertID: 99))
        #expect(menu.first { $0.label == "    alert__3" }?.enabled == false, "an acknowledged alert has nothing to do")
        #expect(Set(menu.map(\.id)).count == menu.count, "ids are unique")
        let out = TrayModel.menu(facts(.loggedOut), localize: .english)
        #expect(!out.contains { $0.action == .showTimeline }, "no alerts, nothing to explain")
        #expect(out.first { $0.id == 3 }?.label == "Log in" && out.first { $0.id == 3 }?.action == .login)
        #expect(out.first { $0.id == 4 }?.enabled == false, "nothing to clear")
        let unconfigured = TrayModel.menu(facts(.unconfigured), localize: .english)
        #expect(unconfigured.first { $0.id == 3 }?.enabled == false, "no login without a configuration")
        #expect(unconfigured.contains { $0.action == .setUp && $0.enabled })
    }
}
