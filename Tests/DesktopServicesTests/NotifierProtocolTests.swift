import DBus
import DBusAsync
import Foundation
import DesktopServices
import CCRelayCore
import TestSupport
import Testing

/// The Notifier against python3-dbusmock's notification_daemon, which records
/// every call with its exact D-Bus types.
@Suite(.desktopBudget) struct NotifierProtocolTests {
    static let fullCapabilities = ["body", "body-markup", "actions", "persistence"]

    @Test func notifySendsExactlyTypedHintsAndActions() async throws {
        let bus = try PrivateBus()
        let mock = try await MockNotificationServer(on: bus, capabilities: Self.fullCapabilities)
        let harness = try await NotifierHarness(bus: bus)
        #expect(try await harness.waitForServer(supporting: "actions"))
        let alert = AlertCatalogue.alert(for: .loggedOut(message: nil), localize: .english)
        try await harness.post(alert)
        #expect(await eventually { harness.deliveredIDs(.loggedOut).count == 1 })
        let call = try #require(try await mock.calls("Notify").first)
        #expect(call.count == 8)
        #expect(call[0] == .string("CC Relay"))
        #expect(call[1] == .uint32(0))
        #expect(call[2] == .string("io.github.ccrelay.CCRelay"))
        #expect(call[3] == .string(alert.title))
        #expect(call[4] == .string(alert.body))
        #expect(call[5] == ["default", "Show status", "relogin", "Log in again"].dbusValue)
        let hints = try [String: Variant](dbusValue: call[6])
        #expect(hints["urgency"]?.value == .byte(2), "urgency must be a byte")
        #expect(hints["category"]?.value == .string("network.disconnected"))
        #expect(hints["desktop-entry"]?.value == .string("io.github.ccrelay.CCRelay"))
        #expect(hints["resident"]?.value == .boolean(true), "resident must be a boolean")
        #expect(hints["transient"] == nil)
        #expect(call[7] == .int32(-1))

        try await harness.post(AlertCatalogue.alert(for: .backOnline, localize: .english))
        #expect(await eventually { harness.deliveredIDs(.backOnline).count == 1 })
        let backOnline = try #require(try await mock.calls("Notify").last)
        let backHints = try [String: Variant](dbusValue: backOnline[6])
        #expect(backHints["transient"]?.value == .boolean(true), "transient must be a boolean")
        #expect(backHints["urgency"]?.value == .byte(0))
        #expect(backOnline[5] == [String]().dbusValue, "back online has no actions")
    }

    @Test func oneSlotPerKindReusesTheServersID() async throws {
        let bus = try PrivateBus()
        let mock = try await MockNotificationServer(on: bus, capabilities: Self.fullCapabilities)
        let harness = try await NotifierHarness(bus: bus)
        #expect(try await harness.waitForServer())
        try await harness.post(.sample(.keepAliveFailing, body: "first"))
        #expect(await eventually { harness.deliveredIDs(.keepAliveFailing).count == 1 })
        try await harness.post(.sample(.locationOff))
        #expect(await eventually { harness.deliveredIDs(.locationOff).count == 1 })
        try await harness.post(.sample(.keepAliveFailing, body: "second"))
        #expect(await eventually { harness.deliveredIDs(.keepAliveFailing).count == 2 })
        let calls = try await mock.calls("Notify")
        #expect(calls.map { $0[1] } == [.uint32(0), .uint32(0), .uint32(harness.deliveredIDs(.keepAliveFailing)[0])])
        #expect(harness.deliveredIDs(.keepAliveFailing)[0] == harness.deliveredIDs(.keepAliveFailing)[1])
        #expect(harness.deliveredIDs(.keepAliveFailing)[0] != harness.deliveredIDs(.locationOff)[0])
    }

    /// issue 23: the next run of the daemon (a new notifier) takes over the bubbles the last
    /// one left on screen, by the ids the journal kept: a new alert of the kind replaces the
    /// bubble and closing the kind closes it — also when asked before the server is known.
    @Test func aBubbleOfAnEarlierRunIsAdoptedReplacedAndClosed() async throws {
        let bus = try PrivateBus()
        let mock = try await MockNotificationServer(on: bus, capabilities: Self.fullCapabilities)
        let earlier = try await NotifierHarness(bus: bus)
        try await earlier.post(.sample(.credentials, body: "earlier run"))
        try await earlier.post(.sample(.notSetUp, body: "earlier run"))
        #expect(await eventually { earlier.deliveredIDs(.credentials).count == 1 && earlier.deliveredIDs(.notSetUp).count == 1 })
        let credentials = earlier.deliveredIDs(.credentials)[0], notSetUp = earlier.deliveredIDs(.notSetUp)[0]
        let next = try await NotifierHarness(bus: bus)
        // Adopted at once, before the new notifier has heard who the server is.
        try await next.adopt(.credentials, shownAs: credentials)
        try await next.adopt(.notSetUp, shownAs: notSetUp)
        try await next.close(.notSetUp)
        #expect(await eventually { ((try? await mock.calls("CloseNotification")) ?? []).contains { $0.first == .uint32(notSetUp) } })
        #expect(try await next.waitForServer())
        try await next.post(.sample(.credentials, body: "this run"))
        #expect(await eventually { next.deliveredIDs(.credentials) == [credentials] }, "the earlier bubble replaced, not a second one")
        let calls = try await mock.calls("Notify")
        #expect(calls.last?[1] == .uint32(credentials), "\(calls)")
    }

    @Test func postsInQuickSuccessionChainOnTheFirstID() async throws {
        let bus = try PrivateBus()
        let mock = try await MockNotificationServer(on: bus, capabilities: Self.fullCapabilities)
        let harness = try await NotifierHarness(bus: bus)
        #expect(try await harness.waitForServer())
        let notifier = harness.notifier
        try await harness.connection.perform {
            notifier.post(.sample(.notice, body: "one"))
            notifier.post(.sample(.notice, body: "two"))
            notifier.post(.sample(.notice, body: "three"))
        }
        #expect(await eventually { harness.deliveredIDs(.notice).count == 2 })
        try await harness.barrier()
        let calls = try await mock.calls("Notify")
        #expect(calls.count == 2, "the middle post is superseded before it is sent")
        #expect(calls.map { $0[4] } == [.string("one"), .string("three")])
        #expect(calls[1][1] == .uint32(harness.deliveredIDs(.notice)[0]), "never a new bubble for the same kind")
    }

    @Test func withoutBodyMarkupTextIsSentPlainAndWithItEscaped() async throws {
        let hostile = "<b>bold</b> & <a href='x'>link</a>"
        for (capabilities, expectedBody) in [
            (["body"], hostile),
            (["body", "body-markup"], "&lt;b&gt;bold&lt;/b&gt; &amp; &lt;a href='x'&gt;link&lt;/a&gt;"),
        ] {
            let bus = try PrivateBus()
            let mock = try await MockNotificationServer(on: bus, capabilities: capabilities)
            let harness = try await NotifierHarness(bus: bus)
            #expect(try await harness.waitForServer())
            try await harness.post(.sample(.notice, title: "Notice", body: hostile))
            #expect(await eventually { harness.deliveredIDs(.notice).count == 1 })
            let call = try #require(try await mock.calls("Notify").first)
            #expect(call[4] == .string(expectedBody), "capabilities \(capabilities)")
            #expect(call[5] == [String]().dbusValue, "no actions unless the server advertises them")
        }
    }

    @Test func titleAndBodyAreCapped() async throws {
        let bus = try PrivateBus()
        let mock = try await MockNotificationServer(on: bus, capabilities: ["body"])
        let harness = try await NotifierHarness(bus: bus)
        #expect(try await harness.waitForServer())
        try await harness.post(.sample(.notice, title: String(repeating: "标", count: 500),
                                       body: String(repeating: "x", count: 5000) + "\0tail"))
        #expect(await eventually { harness.deliveredIDs(.notice).count == 1 })
        let call = try #require(try await mock.calls("Notify").first)
        let title = try String(dbusValue: call[3])
        let body = try String(dbusValue: call[4])
        #expect(title.count == 120 && title.hasSuffix("…"))
        #expect(body.count == 1000 && body.hasSuffix("…"))
    }

    @Test func signalsAreHandledOnlyForOwnIDsFromTheServer() async throws {
        let bus = try PrivateBus()
        let mock = try await MockNotificationServer(on: bus, capabilities: Self.fullCapabilities)
        let harness = try await NotifierHarness(bus: bus)
        #expect(try await harness.waitForServer())
        try await harness.post(.sample(.loggedOut))
        #expect(await eventually { harness.deliveredIDs(.loggedOut).count == 1 })
        let id = harness.deliveredIDs(.loggedOut)[0]

        // Someone else's bubble, and a forged signal from a non-owner: ignored.
        try await mock.emit("ActionInvoked", signature: "us", [.uint32(id + 100), .string("default")])
        let impostor = try bus.connect(label: "impostor")
        try await impostor.perform {
            try impostor.emit(path: notificationsPath, interface: notificationsName, member: "ActionInvoked",
                              body: [.uint32(id), .string("forged")])
        }
        // Ours: token first, as servers send it, then the action.
        try await mock.emit("ActivationToken", signature: "us", [.uint32(id), .string("token-123")])
        try await mock.emit("ActionInvoked", signature: "us", [.uint32(id), .string("relogin")])
        #expect(await eventually { harness.actions().count == 1 })
        try await harness.barrier(signalsFrom: mock, impostor)
        let actions = harness.actions()
        #expect(actions.count == 1)
        #expect(actions.first?.0 == .loggedOut && actions.first?.1 == "relogin" && actions.first?.2 == "token-123")

        try await mock.emit("NotificationClosed", signature: "uu", [.uint32(id + 100), .uint32(2)])
        try await mock.emit("NotificationClosed", signature: "uu", [.uint32(id), .uint32(2)])
        #expect(await eventually { harness.closes().count == 1 })
        #expect(harness.closes().first?.0 == .loggedOut && harness.closes().first?.1 == .dismissed)

        // The slot is free again: the next logout is a new bubble.
        try await harness.post(.sample(.loggedOut))
        #expect(await eventually { harness.deliveredIDs(.loggedOut).count == 2 })
        #expect(try await mock.calls("Notify").last?[1] == .uint32(0))
    }

    @Test func closeAsksTheServerAndReportsItsReason() async throws {
        let bus = try PrivateBus()
        let mock = try await MockNotificationServer(on: bus, capabilities: Self.fullCapabilities)
        let harness = try await NotifierHarness(bus: bus)
        #expect(try await harness.waitForServer())
        try await harness.post(.sample(.keepAliveFailing))
        #expect(await eventually { harness.deliveredIDs(.keepAliveFailing).count == 1 })
        try await harness.close(.keepAliveFailing)
        #expect(await eventually { harness.closes().count == 1 })
        #expect(harness.closes().first?.1 == .closedByCall)
        let close = try await mock.calls("CloseNotification")
        #expect(close.first == [.uint32(harness.deliveredIDs(.keepAliveFailing)[0])], "CloseNotification takes a u")
    }

    @Test func alertsWaitForAServerAndArriveOnceWhenOneAppears() async throws {
        let bus = try PrivateBus()
        let harness = try await NotifierHarness(bus: bus)
        // The notifier has heard that no server owns the name.
        #expect(await eventually { harness.events.get().contains { if case .serverChanged(nil) = $0 { true } else { false } } })
        try await harness.post(.sample(.loggedOut, body: "waiting"))
        try await harness.post(.sample(.loggedOut, body: "newest"))
        try await harness.post(.sample(.locationDenied))
        #expect(await eventually { harness.logLines.get().count == 3 })
        #expect(harness.logLines.get().allSatisfy { $0.contains("no notification server") })
        let mock = try await MockNotificationServer(on: bus, capabilities: Self.fullCapabilities)
        #expect(await eventually { harness.deliveredIDs(.loggedOut).count == 1 && harness.deliveredIDs(.locationDenied).count == 1 })
        try await harness.barrier()
        let calls = try await mock.calls("Notify")
        #expect(calls.count == 2, "the newest alert of each kind, once")
        #expect(calls.first?[4] == .string("newest"))
        #expect(harness.logLines.get().count == 3, "each waiting alert is logged once")
    }

    /// issue 21: a waiting alert acknowledged meanwhile (the daemon closes its kind) is never shown.
    @Test func aWaitingAlertThatIsClosedIsNeverShown() async throws {
        let bus = try PrivateBus()
        let harness = try await NotifierHarness(bus: bus)
        try await harness.post(.sample(.loggedOut, body: "acknowledged in the tray"))
        try await harness.post(.sample(.locationDenied))
        #expect(await eventually { harness.logLines.get().count == 2 })
        try await harness.close(.loggedOut)
        let mock = try await MockNotificationServer(on: bus, capabilities: Self.fullCapabilities)
        #expect(await eventually { harness.deliveredIDs(.locationDenied).count == 1 })
        let calls = try await mock.calls("Notify")
        #expect(calls.count == 1 && calls.first?[4] != .string("acknowledged in the tray"), "\(calls)")
    }

    /// issue 21: one failed activation (dunst died at activation: no DISPLAY yet in the
    /// activation environment) was never tried again; a later alert tries again, rate limited.
    @Test func aFailedActivationIsTriedAgainByALaterAlert() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-flaky-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // The first start fails, as a server does that finds no display; the next one runs dunst.
        let script = folder + "/flaky-server"
        try writeExecutable("""
            #!/bin/sh
            if [ ! -e \(folder)/tried ]; then touch \(folder)/tried; exit 1; fi
            exec /usr/bin/dunst -config \(Dunst.configPath)
            """, to: script)
        let bus = try PrivateBus(services: [Notifier.busName: script])
        let harness = try await NotifierHarness(bus: bus, activationRetry: .seconds(1))
        try await harness.post(.sample(.loggedOut, body: "first"))
        #expect(await eventually { harness.logLines.get().contains { $0.contains("could not be started") } }, "\(harness.logLines.get())")
        try await Task.sleep(for: .milliseconds(1200))
        try await harness.post(.sample(.keepAliveFailing, body: "second"))
        #expect(await eventually(timeout: .seconds(20)) {
            harness.deliveredIDs(.loggedOut).count == 1 && harness.deliveredIDs(.keepAliveFailing).count == 1
        }, "both reach the server started the second time: \(harness.logLines.get())")
    }

    @Test func aNewServerIsAskedForItsCapabilitiesAndOldIDsAreForgotten() async throws {
        let bus = try PrivateBus()
        let plain = try await MockNotificationServer(on: bus, capabilities: ["body"])
        let harness = try await NotifierHarness(bus: bus)
        #expect(try await harness.waitForServer())
        #expect(try await harness.server?.supports("actions") == false)
        try await harness.post(.sample(.credentials))
        #expect(await eventually { harness.deliveredIDs(.credentials).count == 1 })
        #expect(try await plain.calls("Notify").first?[5] == [String]().dbusValue)
        try await plain.stop()

        let rich = try await MockNotificationServer(on: bus, capabilities: Self.fullCapabilities)
        #expect(try await harness.waitForServer(supporting: "actions"))
        #expect(try await harness.server?.name == "mock-notify")
        // A close of the old server's id means nothing any more.
        try await rich.emit("NotificationClosed", signature: "uu", [.uint32(harness.deliveredIDs(.credentials)[0]), .uint32(2)])
        try await harness.barrier(signalsFrom: rich)
        #expect(harness.closes().isEmpty)
        try await harness.post(.sample(.credentials))
        #expect(await eventually { harness.deliveredIDs(.credentials).count == 2 })
        let call = try #require(try await rich.calls("Notify").first)
        #expect(call[1] == .uint32(0), "an id of the old server is never sent to the new one")
        #expect(call[5] == ["default", "Show status"].dbusValue)
    }

    @Test func aCloseTheServerMisreportsAsDismissedIsStillOurOwn() async throws {
        // As UKUI does: CloseNotification answered with reason 2, "dismissed by the user".
        let bus = try PrivateBus()
        let mock = try await MockNotificationServer(on: bus, capabilities: Self.fullCapabilities)
        try await mock.replaceMethod("CloseNotification", input: "u", output: "",
                                     code: "self.EmitSignal('', 'NotificationClosed', 'uu', [args[0], 2])")
        let harness = try await NotifierHarness(bus: bus)
        #expect(try await harness.waitForServer())
        try await harness.post(.sample(.keepAliveFailing))
        try await harness.post(.sample(.loggedOut))
        #expect(await eventually { harness.deliveredIDs(.keepAliveFailing).count == 1 && harness.deliveredIDs(.loggedOut).count == 1 })
        try await harness.close(.keepAliveFailing)
        #expect(await eventually { harness.closes().count == 1 })
        #expect(harness.closes().first?.0 == .keepAliveFailing && harness.closes().first?.1 == .closedByCall,
                "a close ccrelay asked for never counts as the user's")
        // The user's own dismissal of the other bubble still does.
        try await mock.emit("NotificationClosed", signature: "uu", [.uint32(harness.deliveredIDs(.loggedOut)[0]), .uint32(2)])
        #expect(await eventually { harness.closes().count == 2 })
        #expect(harness.closes().last?.0 == .loggedOut && harness.closes().last?.1 == .dismissed)
    }

    @Test func anIDOfZeroIsShownWithoutAnID() async throws {
        let bus = try PrivateBus()
        let mock = try await MockNotificationServer(on: bus, capabilities: Self.fullCapabilities)
        try await mock.replaceMethod("Notify", input: "susssasa{sv}i", output: "u", code: "ret = 0")
        let harness = try await NotifierHarness(bus: bus)
        #expect(try await harness.waitForServer())
        try await harness.post(.sample(.notice))
        #expect(await eventually { harness.deliveredIDs(.notice) == [0] }, "delivered, not failed: \(harness.events.get())")
        #expect(!harness.events.get().contains { if case .failed = $0 { true } else { false } })
        // Nothing to replace: the next one is a new bubble, and closing sends nothing.
        try await harness.post(.sample(.notice))
        #expect(await eventually { harness.deliveredIDs(.notice) == [0, 0] })
        #expect(try await mock.calls("Notify").map { $0[1] } == [.uint32(0), .uint32(0)])
        try await harness.close(.notice)
        try await harness.barrier()
        #expect(try await mock.calls("CloseNotification").isEmpty)
    }

    @Test func malformedRepliesAreTypedErrorsNotCrashes() async throws {
        let bus = try PrivateBus()
        let mock = try await MockNotificationServer(on: bus, capabilities: Self.fullCapabilities)
        try await mock.replaceMethod("GetCapabilities", input: "", output: "s", code: "ret = 'actions'")
        try await mock.replaceMethod("GetServerInformation", input: "", output: "u", code: "ret = 7")
        try await mock.replaceMethod("Notify", input: "susssasa{sv}i", output: "s", code: "ret = 'not an id'")
        let harness = try await NotifierHarness(bus: bus)
        #expect(try await harness.waitForServer())
        #expect(try await harness.server?.capabilities == [], "unreadable capabilities count as none")
        try await harness.post(.sample(.loggedOut))
        #expect(await eventually {
            harness.events.get().contains { if case .failed(.loggedOut, let error) = $0 { error.name == .invalidSignature } else { false } }
        })
        #expect(harness.logLines.get().contains { $0.contains("capabilities are unreadable") })
        #expect(harness.logLines.get().contains { $0.contains("did not show") })
    }
}
