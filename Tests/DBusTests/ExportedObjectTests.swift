import DBus
import DBusAsync
import Foundation
import TestSupport
import Testing

/// Exported objects: properties, PropertiesChanged and introspection, seen by
/// this module and by systemd's busctl.
@Suite(.desktopBudget) struct ExportedObjectTests {
    let bus: PrivateBus
    let server: Connection
    let client: Connection
    let state = LockedBox("online")

    init() async throws {
        bus = try PrivateBus()
        let server = try bus.connect(label: "server")
        self.server = server
        client = try bus.connect(label: "client")
        let state = self.state
        try await server.perform {
            server.export(
                [
                    Interface(
                        name: "test.Status",
                        methods: [.init("Ping", output: "s") { _ throws(DBusError) in [.string("pong")] }],
                        properties: [
                            .init("State", signature: "s", get: { .string(state.get()) }),
                            .init("Badge", signature: "u", get: { .uint32(3) }),
                            .init("Label", signature: "s", get: { .string(state.get()) },
                                  set: { value throws(DBusError) in state.set(try String(dbusValue: value)) }),
                        ],
                        signals: [.init("Changed", signature: "sa{sv}")])
                ], at: "/test/app/status")
        }
    }

    func properties(_ member: String, _ body: [Value]) async throws(DBusError) -> Message {
        try await client.call(
            .methodCall(destination: server.uniqueName, path: "/test/app/status",
                        interface: "org.freedesktop.DBus.Properties", member: member, body: body))
    }

    @Test func getAndGetAllReturnCurrentValues() async throws {
        let one = try await properties("Get", [.string("test.Status"), .string("State")])
        #expect(try one.argument(0, as: Variant.self).get(String.self) == "online")
        let all = try await properties("GetAll", [.string("test.Status")])
        let dictionary = try all.argument(0, as: [String: Variant].self)
        #expect(dictionary["Badge"]?.get(UInt32.self) == 3)
        #expect(Set(dictionary.keys) == ["State", "Badge", "Label"])
    }

    @Test func thePropertiesClientReadsAndWritesThem() async throws {
        let (client, name) = (self.client, server.uniqueName)
        let results = LockedBox<[String]>([])
        client.loop.execute {
            client.property(name, "/test/app/status", "test.Status", "State") { result in
                results.set(results.get() + ["get \((try? result.get())?.get(String.self) ?? "?")"])
            }
            client.setProperty(name, "/test/app/status", "test.Status", "Label", .string("failing")) { error in
                results.set(results.get() + ["set \(error == nil)"])
                client.allProperties(name, "/test/app/status", "test.Status") { result in
                    results.set(results.get() + ["all \((try? result.get())?["Label"]?.get(String.self) ?? "?")"])
                }
            }
            client.setProperty(name, "/test/app/status", "test.Status", "Badge", .uint32(0)) { error in
                results.set(results.get() + ["read-only \(error?.name == .propertyReadOnly)"])
            }
        }
        #expect(await eventually(timeout: .seconds(10)) { results.get().count == 4 })
        #expect(Set(results.get()) == ["get online", "set true", "all failing", "read-only true"])
    }

    @Test func setWritesWritablePropertiesOnly() async throws {
        _ = try await properties("Set", [.string("test.Status"), .string("Label"), .variant(.string("failing"))])
        #expect(state.get() == "failing")
        let readOnly = await #expect(throws: DBusError.self) {
            _ = try await properties("Set", [.string("test.Status"), .string("Badge"), .variant(.uint32(0))])
        }
        #expect(readOnly?.name == .propertyReadOnly)
        let wrongType = await #expect(throws: DBusError.self) {
            _ = try await properties("Set", [.string("test.Status"), .string("Label"), .variant(.uint32(0))])
        }
        #expect(wrongType?.name == .invalidArgs)
        let unknown = await #expect(throws: DBusError.self) {
            _ = try await properties("Get", [.string("test.Status"), .string("Nope")])
        }
        #expect(unknown?.name == .unknownProperty)
    }

    @Test func propertiesChangedCarriesTheNewValue() async throws {
        let received = LockedBox<[Message]>([])
        _ = try await client.perform {
            client.subscribe(MatchRule(sender: server.uniqueName, path: "/test/app/status",
                                       interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged")) {
                message in received.update { $0.append(message) }
            }
        }
        _ = try await client.nameOwner("org.freedesktop.DBus")
        state.set("logged-out")
        try await server.perform { try server.emitPropertiesChanged(path: "/test/app/status", interface: "test.Status", changed: ["State"]) }
        #expect(await eventually { received.get().count == 1 })
        let message = try #require(received.get().first)
        try message.expect("sa{sv}as")
        #expect(try message.argument(0, as: String.self) == "test.Status")
        #expect(try message.argument(1, as: [String: Variant].self)["State"]?.get(String.self) == "logged-out")
    }

    @Test func busctlIntrospectsTheObjectAndItsParents() throws {
        let object = try run("/usr/bin/busctl", ["--address=\(bus.address)", "introspect", server.uniqueName, "/test/app/status"])
        #expect(object.status == 0, "\(object.standardError)")
        for expected in ["test.Status", ".Ping", ".State", "property  s", ".Label", "writable", ".Changed", "signal",
                         "org.freedesktop.DBus.Properties", "org.freedesktop.DBus.Introspectable"] {
            #expect(object.standardOutput.contains(expected), "busctl introspect lacks \(expected)")
        }
        let tree = try run("/usr/bin/busctl", ["--address=\(bus.address)", "tree", server.uniqueName])
        #expect(tree.status == 0, "\(tree.standardError)")
        #expect(tree.standardOutput.contains("/test/app/status"))
        let property = try run("/usr/bin/busctl", ["--address=\(bus.address)", "get-property", server.uniqueName,
                                                   "/test/app/status", "test.Status", "Badge"])
        #expect(property.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "u 3")
    }

    @Test func anUnexportedObjectIsGone() async throws {
        let ping = Message.methodCall(destination: server.uniqueName, path: "/test/app/status", interface: "test.Status", member: "Ping")
        #expect(try await client.call(ping).argument(0, as: String.self) == "pong")
        try await server.perform { server.unexport("/test/app/status") }
        await #expect(throws: DBusError.self) { _ = try await client.call(ping) }
    }

    @Test func unknownObjectsAreNotAnswered() async throws {
        let error = await #expect(throws: DBusError.self) {
            _ = try await client.call(.methodCall(destination: server.uniqueName, path: "/nothing/here",
                                                  interface: "test.Status", member: "Ping"))
        }
        #expect(error?.name == .unknownMethod || error?.name == .unknownObject)
    }
}
