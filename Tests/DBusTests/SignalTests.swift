import DBus
import DBusAsync
import Foundation
import TestSupport
import Testing

/// Signal subscriptions, sender filtering, name watching and ownership.
@Suite(.desktopBudget) struct SignalTests {
    let bus: PrivateBus
    let listener: Connection
    let emitter: Connection

    init() throws {
        bus = try PrivateBus()
        listener = try bus.connect(label: "listener")
        emitter = try bus.connect(label: "emitter")
    }

    func emit(from connection: Connection, member: String = "Ping", _ body: [Value] = [],
              path: ObjectPath = "/test/signals") async throws {
        try await connection.perform {
            try connection.emit(path: path, interface: "test.Signals", member: member, body: body)
        }
    }

    /// Waits until everything `senders` emitted so far has reached the listener: each sends
    /// a last signal of its own, and the bus keeps each sender's messages in order. What
    /// "nothing else arrived" checks is then settled, without a fixed sleep.
    func barrier(_ senders: Connection...) async throws {
        let arrived = LockedBox<[Message]>([])
        let token = try await subscribe(MatchRule(interface: "test.Barrier", member: "Done"), into: arrived)
        for sender in senders {
            try await sender.perform { try sender.emit(path: "/test/barrier", interface: "test.Barrier", member: "Done", body: []) }
        }
        #expect(await eventually { arrived.get().count == senders.count }, "the barrier came through")
        try await listener.perform { listener.unsubscribe(token) }
    }

    /// Subscribes, then proves the match rule reached the bus with a round trip.
    func subscribe(_ rule: MatchRule, into box: LockedBox<[Message]>) async throws -> SubscriptionToken {
        let token = try await listener.perform { listener.subscribe(rule) { message in box.update { $0.append(message) } } }
        _ = try await listener.nameOwner("org.freedesktop.DBus")
        return token
    }

    @Test func matchingSignalsArriveWithTheirBodyAndOthersDoNot() async throws {
        let received = LockedBox<[Message]>([])
        _ = try await subscribe(MatchRule(interface: "test.Signals", member: "Ping"), into: received)
        try await emit(from: emitter, member: "Other", [.string("ignored")])
        try await emit(from: emitter, [.string("hello"), .uint32(7)])
        #expect(await eventually { received.get().count == 1 })
        let message = try #require(received.get().first)
        #expect(message.member == "Ping")
        #expect(message.sender == emitter.uniqueName)
        #expect(message.path == "/test/signals")
        #expect(try message.argument(0, as: String.self) == "hello")
        // Nothing else trickles in afterwards.
        try await barrier(emitter)
        #expect(received.get().count == 1)
    }

    @Test func arg0AndPathNarrowTheMatch() async throws {
        let received = LockedBox<[Message]>([])
        _ = try await subscribe(MatchRule(path: "/test/signals", member: "Ping", arg0: "mine"), into: received)
        try await emit(from: emitter, [.string("theirs")])
        try await emit(from: emitter, [.string("mine")], path: "/elsewhere")
        try await emit(from: emitter, [.string("mine")])
        #expect(await eventually { received.get().count == 1 })
        try await barrier(emitter)
        #expect(received.get().count == 1)
    }

    @Test func wellKnownSenderFilterFollowsTheOwner() async throws {
        let impostor = try bus.connect(label: "impostor")
        #expect(try await emitter.requestName("test.Owner") == .primaryOwner)
        let received = LockedBox<[Message]>([])
        // A broad subscription makes the bus route every Ping here, so the
        // sender filter of the narrow one must do its own work.
        let everything = LockedBox<[Message]>([])
        _ = try await subscribe(MatchRule(member: "Ping"), into: everything)
        _ = try await subscribe(MatchRule(sender: "test.Owner", member: "Ping"), into: received)
        try await emit(from: impostor, [.string("from impostor")])
        try await emit(from: emitter, [.string("from owner")])
        #expect(await eventually { received.get().count == 1 && everything.get().count == 2 })
        #expect(try received.get().first?.argument(0, as: String.self) == "from owner")
        // Ownership moves: now only the new owner's signals count.
        try await emitter.releaseName("test.Owner")
        #expect(try await impostor.requestName("test.Owner") == .primaryOwner)
        // The bus sent NameOwnerChanged before this answer: the listener has followed the owner.
        #expect(await eventually { (try? await listener.nameOwner("test.Owner")) == impostor.uniqueName })
        try await emit(from: emitter, [.string("old owner")])
        try await emit(from: impostor, [.string("new owner")])
        #expect(await eventually { received.get().count == 2 })
        try await barrier(emitter, impostor)
        #expect(received.get().map { try? $0.argument(0, as: String.self) } == ["from owner", "new owner"])
    }

    @Test func unsubscribeStopsDelivery() async throws {
        let received = LockedBox<[Message]>([])
        let token = try await subscribe(MatchRule(member: "Ping"), into: received)
        try await emit(from: emitter)
        #expect(await eventually { received.get().count == 1 })
        try await listener.perform { listener.unsubscribe(token) }
        try await emit(from: emitter)
        try await barrier(emitter)
        #expect(received.get().count == 1)
    }

    @Test func nameWatchReportsOwnerChanges() async throws {
        let owners = LockedBox<[String?]>([])
        _ = try await listener.perform { listener.watchName("test.Watched") { owner in owners.update { $0.append(owner) } } }
        #expect(await eventually { owners.get() == [nil] })
        #expect(try await emitter.requestName("test.Watched") == .primaryOwner)
        #expect(await eventually { owners.get() == [nil, emitter.uniqueName] })
        let second = try bus.connect(label: "second")
        #expect(try await second.requestName("test.Watched") == .exists, "DO_NOT_QUEUE refuses a taken name")
        try await emitter.perform { emitter.close() }
        #expect(await eventually { owners.get() == [nil, emitter.uniqueName, nil] })
        #expect(try await second.requestName("test.Watched") == .primaryOwner)
        #expect(await eventually { owners.get() == [nil, emitter.uniqueName, nil, second.uniqueName] })
    }

    @Test func aSecondWatcherOfTheSameNameHearsTheCurrentOwnerAtOnce() async throws {
        #expect(try await emitter.requestName("test.Shared") == .primaryOwner)
        let first = LockedBox<[String?]>([])
        let second = LockedBox<[String?]>([])
        _ = try await listener.perform { listener.watchName("test.Shared") { owner in first.update { $0.append(owner) } } }
        #expect(await eventually { first.get() == [emitter.uniqueName] })
        _ = try await listener.perform { listener.watchName("test.Shared") { owner in second.update { $0.append(owner) } } }
        #expect(await eventually { second.get() == [emitter.uniqueName] })
    }
}
