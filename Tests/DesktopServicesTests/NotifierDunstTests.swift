import DBus
import DBusAsync
import Foundation
import DesktopServices
import CCRelayCore
import TestSupport
import Testing

/// The Notifier against a real dunst under Xvfb.
@Suite(.desktopBudget) struct NotifierDunstTests {
    @Test func serverTextIsEscapedForDunstWhichParsesMarkup() async throws {
        let bus = try PrivateBus()
        let dunst = try await Dunst(on: bus)
        let harness = try await NotifierHarness(bus: bus)
        #expect(try await harness.waitForServer(supporting: "body-markup"))
        #expect(try await harness.server?.name == "dunst")
        let notice = AlertCatalogue.alert(
            for: .notice(id: "n1", title: "维护 <b>通知</b>", body: "<i>23:00</i> & <a href=\"x\">x</a>", urgency: .critical), localize: .english)
        try await harness.post(notice)
        #expect(await eventually { harness.deliveredIDs(.notice).count == 1 })
        let history = try dunst.closeAllAndReadHistory()
        let record = try #require(history.first)
        #expect(record.appName == "CC Relay")
        #expect(record.category == "x-ccrelay.notice")
        #expect(record.summary == "维护 <b>通知</b>", "dunst shows the summary literally")
        #expect(record.body == "&lt;i&gt;23:00&lt;/i&gt; &amp; &lt;a href=\"x\"&gt;x&lt;/a&gt;")
    }

    @Test func dismissingInDunstIsReportedAsDismissed() async throws {
        let bus = try PrivateBus()
        let dunst = try await Dunst(on: bus)
        let harness = try await NotifierHarness(bus: bus)
        #expect(try await harness.waitForServer())
        try await harness.post(.sample(.keepAliveFailing))
        #expect(await eventually { harness.deliveredIDs(.keepAliveFailing).count == 1 })
        _ = try dunst.control(["close"])
        #expect(await eventually { harness.closes().count == 1 })
        #expect(harness.closes().first?.0 == .keepAliveFailing)
        #expect(harness.closes().first?.1 == .dismissed)
    }

    @Test func alertPostedWhileDunstIsDownArrivesOnceWhenItReturns() async throws {
        let bus = try PrivateBus()
        let first = try await Dunst(on: bus)
        let harness = try await NotifierHarness(bus: bus)
        #expect(try await harness.waitForServer())
        try await harness.post(.sample(.keepAliveFailing, body: "before the restart"))
        #expect(await eventually { harness.deliveredIDs(.keepAliveFailing).count == 1 })
        try await first.stop()
        #expect(await eventually { (try? await harness.server) == nil })

        try await harness.post(.sample(.loggedOut, body: "while dunst was away"))
        #expect(await eventually { harness.logLines.get().count == 1 })
        #expect(harness.logLines.get().first?.contains("while dunst was away") == true)

        let second = try await Dunst(on: bus)
        #expect(await eventually { harness.deliveredIDs(.loggedOut).count == 1 })
        try await Task.sleep(for: .milliseconds(300))
        let history = try second.closeAllAndReadHistory()
        #expect(history.map(\.body) == ["while dunst was away"], "delivered once, and nothing from before is re-sent")
        #expect(history.first?.category == "network.disconnected")
    }
}
