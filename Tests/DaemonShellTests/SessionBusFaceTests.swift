import AlertJournal
import DBus
import DBusAsync
@testable import DaemonShell
import DesktopServices
import EventLoop
import Foundation
import CCRelayCore
import CoreVocabulary
import Testing
import TestSupport

/// The shell's face on the session bus, on a private bus that goes away and
/// comes back where it was: the face retries with back-off, then owns the
/// name, serves the control API and the LauncherEntry again, and tells the
/// daemon (which restarts what used the old connection).
@Suite(.desktopBudget) struct SessionBusFaceTests {
    /// Answers the control API; counts what it was asked.
    final class CountingTarget: ControlTarget {
        var badgeClears = 0
        let version = "test"
        var snapshot = DaemonSnapshot(state: .online, badge: BadgeState(count: 7, urgent: false))
        func clearBadge() throws(DBusError) -> UInt32 {
            badgeClears += 1
            return 7
        }
        func request(_ request: UserRequest) {}
        func journal(limit: Int) throws(DBusError) -> [JournalEntry] { [] }
        func timeline(since: Double) throws(DBusError) -> [TimelineEntry] { [] }
    }

    @Test func aRestartedBusIsRejoinedWithBackOffAndEverythingServedAgain() async throws {
        let socket = "/tmp/ccrelay-face-\(UUID().uuidString.prefix(8)).sock"
        let address = "unix:path=\(socket)"
        let first = try PrivateBus(socketPath: socket)
        let thread = EventLoopThread()
        defer { thread.stop() }
        let loop = thread.loop
        let logs = LockedBox<[String]>([])
        let reconnections = LockedBox(0)
        let target = CountingTarget()
        // Made, used and released on the loop's thread, as the daemon's is.
        var face: SessionBusFace? = try loop.sync {
            try SessionBusFace(loop: loop, log: { line in logs.update { $0.append(line) } }, address: .address(address))
        }
        loop.sync {
            guard let face else { return }
            face.onReconnected = { reconnections.update { $0 += 1 } }
            face.start(serving: target) { error in
                if let error { logs.update { $0.append("start: \(error)") } }
            }
        }
        #expect(try await first.waitForName(ControlNames.busName))

        first.stop()
        // The first try, a second later, finds no bus: the next waits twice as long.
        #expect(await eventually(timeout: .seconds(20)) { logs.get().contains { $0.contains("next try in 2 s") } }, "\(logs.get())")
        #expect(reconnections.get() == 0)
        let second = try PrivateBus(socketPath: socket)
        #expect(await eventually(timeout: .seconds(20)) { reconnections.get() == 1 }, "\(logs.get())")
        #expect(logs.get().contains("reconnected to the session bus"))

        let client = try second.connect()
        defer { client.loop.sync { client.close() } }
        #expect(try await client.nameOwner(ControlNames.busName) != nil, "the name is claimed again")
        let cleared = try await client.call(.methodCall(
            destination: ControlNames.busName, path: ControlNames.path, interface: ControlNames.interface, member: "ClearBadge"))
        #expect(try cleared.argument(0, as: UInt32.self) == 7, "the control API is served again")
        #expect(loop.sync { target.badgeClears } == 1)
        let query = try await client.call(.methodCall(
            destination: ControlNames.busName, path: LauncherEntry.path, interface: LauncherEntry.interfaceName, member: "Query"))
        #expect(try query.argument(0, as: String.self) == LauncherEntry.applicationURI, "the LauncherEntry is served again")
        loop.sync { face = nil }
        second.stop()
    }

    /// issue 20: a bubble waiting for a notification server was lost when the
    /// session bus restarted (the reconnection made a new notifier with an
    /// empty queue); so was one raised while the bus was away. Both are shown
    /// by the new bus's server.
    @Test func bubblesWaitingWhenTheBusRestartsAreShownByTheNewBussServer() async throws {
        let socket = "/tmp/ccrelay-face-\(UUID().uuidString.prefix(8)).sock"
        let first = try PrivateBus(socketPath: socket)
        let thread = EventLoopThread()
        defer { thread.stop() }
        let loop = thread.loop
        let logs = LockedBox<[String]>([])
        let target = CountingTarget()
        target.snapshot = DaemonSnapshot(state: .offline, badge: BadgeState(count: 0, urgent: false))
        var face: SessionBusFace? = try loop.sync {
            try SessionBusFace(loop: loop, log: { line in logs.update { $0.append(line) } }, address: .address("unix:path=\(socket)"))
        }
        loop.sync {
            face?.start(serving: target) { _ in }
        }
        #expect(try await first.waitForName(ControlNames.busName))
        // No notification server on this bus: the logout waits.
        loop.sync { face?.post(Alert(kind: .loggedOut, title: "waited before", body: "b", urgency: .critical)) }
        #expect(await eventually { logs.get().contains { $0.contains("no notification server") } }, "\(logs.get())")
        first.stop()
        #expect(await eventually { logs.get().contains("the session bus went away; reconnecting") }, "\(logs.get())")
        loop.sync { face?.post(Alert(kind: .credentials, title: "raised while away", body: "b", urgency: .critical)) }
        let second = try PrivateBus(socketPath: socket)
        let server = try await MockNotificationServer(on: second, capabilities: ["body"])
        #expect(await eventually(timeout: .seconds(20)) { logs.get().contains("reconnected to the session bus") }, "\(logs.get())")
        func shown() async -> [String] {
            ((try? await server.calls("Notify")) ?? []).compactMap { call in
                guard call.count > 3, case .string(let summary) = call[3] else { return nil }
                return summary
            }
        }
        let both = await eventually(timeout: .seconds(20)) { await Set(shown()) == ["waited before", "raised while away"] }
        let seen = await shown()
        #expect(both, "\(seen)")
        loop.sync { face = nil }
        try await server.stop()
        second.stop()
    }
}
