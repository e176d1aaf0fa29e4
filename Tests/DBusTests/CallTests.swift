import DBus
import DBusAsync
import DispatchLoop
import Foundation
import TestSupport
import Testing

/// Method calls, errors, timeouts and signature checks on a real private bus.
@Suite(.desktopBudget) struct CallTests {
    let bus: PrivateBus
    let server: Connection
    let client: Connection

    init() async throws {
        bus = try PrivateBus()
        let server = try bus.connect(label: "server")
        self.server = server
        client = try bus.connect(label: "client")
        try await server.perform {
            server.export(
                [
                    Interface(
                        name: "test.Calls",
                        methods: [
                            .init("Add", input: "ii", output: "i") { message throws(DBusError) in
                                [.int32(try message.argument(0, as: Int32.self) &+ message.argument(1, as: Int32.self))]
                            },
                            .init("Refuse") { _ throws(DBusError) in
                                throw DBusError(DBusError.Name(rawValue: "test.Error.Refused"), "no, thank you")
                            },
                            .init("Ignore") { _ in },  // never answers
                            .init("Later", output: "s") { invocation in
                                (server.loop as? DispatchScheduler)?.execute(after: .milliseconds(100)) {
                                    invocation.reply([.string("done")])
                                }
                            },
                            .init("Lie", output: "s") { _ throws(DBusError) in [.int32(1)] },
                        ])
                ], at: "/test/calls")
        }
    }

    func call(_ member: String, _ body: [Value] = [], timeout: Duration = .seconds(5)) async throws(DBusError) -> Message {
        try await client.call(
            .methodCall(destination: server.uniqueName, path: "/test/calls", interface: "test.Calls", member: member,
                        body: body), timeout: timeout)
    }

    @Test func replyCarriesTheResult() async throws {
        let reply = try await call("Add", [.int32(40), .int32(2)])
        try reply.expect("i")
        #expect(try reply.argument(0, as: Int32.self) == 42)
    }

    @Test func deferredReplyArrives() async throws {
        #expect(try await call("Later").argument(0, as: String.self) == "done")
    }

    @Test func peerErrorKeepsItsNameAndMessage() async throws {
        let error = await #expect(throws: DBusError.self) { _ = try await call("Refuse") }
        #expect(error?.name.rawValue == "test.Error.Refused")
        #expect(error?.message == "no, thank you")
    }

    @Test func wrongArgumentsAreInvalidArgs() async throws {
        let error = await #expect(throws: DBusError.self) { _ = try await call("Add", [.string("x")]) }
        #expect(error?.name == .invalidArgs)
    }

    @Test func unknownMethodAndUnknownServiceAreTyped() async throws {
        let unknown = await #expect(throws: DBusError.self) { _ = try await call("Nope") }
        #expect(unknown?.name == .unknownMethod)
        let missing = await #expect(throws: DBusError.self) {
            _ = try await client.call(.methodCall(destination: "test.Nobody", path: "/", interface: nil, member: "X"))
        }
        #expect(missing?.name == .serviceUnknown)
    }

    @Test func aCallWithoutAnswerTimesOut() async throws {
        let started = ContinuousClock.now
        let error = await #expect(throws: DBusError.self) { _ = try await call("Ignore", timeout: .milliseconds(300)) }
        #expect(error?.name == .noReply)
        #expect(ContinuousClock.now - started >= .milliseconds(250))
    }

    @Test func aReplyOfTheWrongTypeIsATypedErrorNotACrash() async throws {
        // The server's own reply check refuses to send a lying reply.
        let lied = await #expect(throws: DBusError.self) { _ = try await call("Lie") }
        #expect(lied?.name == .failed)
        // A reply checked against the wrong expectation.
        let reply = try await call("Add", [.int32(1), .int32(1)])
        let mismatch = #expect(throws: DBusError.self) { try reply.expect("s") }
        #expect(mismatch?.name == .invalidSignature)
        #expect(throws: DBusError.self) { _ = try reply.argument(0, as: String.self) }
        #expect(throws: DBusError.self) { _ = try reply.argument(3, as: Int32.self) }
    }

    @Test func callsFromBusctlReachTheExportedObject() async throws {
        let result = try run(
            "/usr/bin/busctl",
            ["--address=\(bus.address)", "call", server.uniqueName, "/test/calls", "test.Calls", "Add", "ii", "2", "3"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "i 5")
    }

    @Test func closedConnectionFailsCallsWithDisconnected() async throws {
        try await client.perform { client.close() }
        let error = await #expect(throws: DBusError.self) { _ = try await call("Add", [.int32(1), .int32(1)]) }
        #expect(error?.name == .disconnected)
    }

    @Test func losingTheBusIsReported() async throws {
        let lost = LockedBox(false)
        try await client.perform { client.onDisconnect = { lost.set(true) } }
        bus.stop()
        #expect(await eventually { lost.get() })
        #expect(try await client.perform { client.isConnected } == false)
        let error = await #expect(throws: DBusError.self) { _ = try await call("Add", [.int32(1), .int32(1)]) }
        #expect(error?.name == .disconnected)
    }
}
