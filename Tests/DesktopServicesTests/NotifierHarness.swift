import DBus
import DBusAsync
import Foundation
import DesktopServices
import CCRelayCore
import CoreVocabulary
import TestSupport

/// A Notifier on its own connection to a test bus, recording its events and log.
final class NotifierHarness: Sendable {
    let connection: Connection
    let notifier: Notifier
    let events = LockedBox<[Notifier.Event]>([])
    let logLines = LockedBox<[String]>([])

    init(bus: PrivateBus, activationRetry: Duration = .seconds(30)) async throws {
        connection = try bus.connect(label: "notifier")
        let connection = self.connection
        let events = self.events
        let logLines = self.logLines
        notifier = try await connection.perform {
            let notifier = Notifier(connection: connection, activationRetry: activationRetry) { line in logLines.update { $0.append(line) } }
            notifier.onEvent = { event in events.update { $0.append(event) } }
            notifier.start()
            return notifier
        }
    }

    deinit { connection.loop.sync { notifier.stop(); connection.close() } }

    func post(_ alert: Alert) async throws {
        let notifier = self.notifier
        try await connection.perform { notifier.post(alert) }
    }

    func adopt(_ kind: AlertKind, shownAs id: UInt32) async throws {
        let notifier = self.notifier
        try await connection.perform { notifier.adopt(kind, shownAs: id) }
    }

    /// Waits until the notification server has received everything the notifier sent so far:
    /// a call on the notifier's own connection is answered after the ones before it.
    func barrier() async throws {
        _ = try await connection.call(
            Message.methodCall(destination: notificationsName, path: notificationsPath, interface: notificationsName, member: "GetCapabilities"))
    }

    /// Waits until the signals `mock` (and `others`) emitted so far have reached the notifier:
    /// each sends a last one of its own, and the bus keeps each sender's messages in order.
    func barrier(signalsFrom mock: MockNotificationServer, _ others: Connection...) async throws {
        let arrived = LockedBox(0)
        let connection = self.connection
        let token = try await connection.perform {
            connection.subscribe(MatchRule(member: "Barrier")) { _ in arrived.update { $0 += 1 } }
        }
        _ = try await connection.nameOwner("org.freedesktop.DBus")  // the rule is in place
        try await mock.emit("Barrier", signature: "", [])
        for other in others {
            try await other.perform { try other.emit(path: notificationsPath, interface: notificationsName, member: "Barrier", body: []) }
        }
        _ = await eventually { arrived.get() == 1 + others.count }
        try await connection.perform { connection.unsubscribe(token) }
    }

    func close(_ kind: AlertKind) async throws {
        let notifier = self.notifier
        try await connection.perform { notifier.close(kind) }
    }

    var server: Notifier.ServerInfo? {
        get async throws {
            let notifier = self.notifier
            return try await connection.perform { notifier.server }
        }
    }

    /// Ids delivered so far, per kind, in order.
    func deliveredIDs(_ kind: AlertKind) -> [UInt32] {
        events.get().compactMap { if case .delivered(kind, let id) = $0 { id } else { nil } }
    }

    func closes() -> [(AlertKind, Notifier.CloseReason)] {
        events.get().compactMap { if case .closed(let kind, let reason) = $0 { (kind, reason) } else { nil } }
    }

    func actions() -> [(AlertKind, String, String?)] {
        events.get().compactMap {
            if case .actionInvoked(let kind, let key, let token) = $0 { (kind, key, token) } else { nil }
        }
    }

    /// Waits until the notifier knows a server with these capabilities.
    func waitForServer(supporting capability: String? = nil) async throws -> Bool {
        await eventually {
            guard let server = try? await self.server else { return false }
            return capability.map(server.supports) ?? true
        }
    }
}

extension Alert {
    static func sample(_ kind: AlertKind, title: String? = nil, body: String = "body text") -> Alert {
        var alert = AlertCatalogue.alert(for: AlertCatalogue.examples(.english).first { $0.kind == kind }!, localize: .english)
        if let title { alert.title = title }
        alert.body = body
        return alert
    }
}
