import DBus
import DBusAsync
import Foundation
import TestSupport
import Testing

/// Values sent through a real private dbus-daemon to an echo object and back.
@Suite(.desktopBudget) struct ValueRoundTripTests {
    let bus: PrivateBus
    let server: Connection
    let client: Connection

    init() throws {
        bus = try PrivateBus()
        server = try bus.connect(label: "echo-server")
        client = try bus.connect(label: "echo-client")
    }

    /// Exports an echo method taking `signature` and sends `values` through it.
    func echo(_ values: [Value]) async throws -> [Value] {
        let signature = Signature(rawValue: values.map(\.signature.rawValue).joined())!
        try await server.perform {
            server.export(
                [Interface(name: "test.Echo", methods: [.init("Echo", input: signature, output: signature) { $0.body }])],
                at: "/test/echo")
        }
        let reply = try await client.call(
            .methodCall(destination: server.uniqueName, path: "/test/echo", interface: "test.Echo", member: "Echo",
                        body: values))
        #expect(reply.signature == signature)
        return reply.body
    }

    static let basics: [Value] = [
        .byte(0), .byte(255), .boolean(true), .boolean(false), .int16(.min), .int16(.max), .uint16(.max),
        .int32(.min), .int32(-1), .uint32(.max), .int64(.min), .int64(.max), .uint64(.max), .double(-0.5),
        .double(.infinity), .double(1e-300), .string(""), .string("登录已被注销，请重新登录 🎓 <b>&amp;</b>"),
        .objectPath("/"), .objectPath("/io/github/ccrelay/CCRelay"), .signature(""), .signature("a{sv}(iau)"),
    ]

    @Test(arguments: basics)
    func basicValueSurvives(_ value: Value) async throws {
        #expect(try await echo([value]) == [value])
    }

    @Test func containersAndNestedVariantsSurvive() async throws {
        let hints: [String: Variant] = [
            "urgency": Variant(UInt8(2)), "category": Variant("network.error"), "transient": Variant(true),
            "nested": Variant(.variant(.variant(.array(element: "s", [.string("a"), .string("b")])))),
            "dict": Variant(["k": Variant(Int32(-7))].dbusValue),
        ]
        let values: [Value] = [
            hints.dbusValue,
            .array(element: "s", []),
            .array(element: "a{sv}", [.dictionary(key: "s", value: "v", [])]),
            .dictionary(key: "u", value: "as", [DictEntry(.uint32(1), ["x", "y"].dbusValue)]),
            .structure([.string("s"), .structure([.int32(1), .double(2)]), .array(element: "y", [.byte(1)])]),
            .array(element: "(sv)", [.structure([.string("k"), .variant(.objectPath("/a/b"))])]),
            .variant(.structure([.uint64(9), .boolean(false)])),
        ]
        let echoed = try await echo(values)
        #expect(echoed == values)
        let decoded = try [String: Variant](dbusValue: echoed[0])
        #expect(decoded["urgency"]?.get(UInt8.self) == 2)
        #expect(decoded["transient"]?.get(Bool.self) == true)
        #expect(decoded["urgency"]?.get(Int32.self) == nil, "a byte must not decode as int32")
        #expect(try [String: Variant](dbusValue: decoded["dict"]!.value)["k"]?.get(Int32.self) == -7)
    }

    @Test func swiftTypesEncodeWithTheirSignatures() throws {
        #expect([String: Variant].dbusSignature == "a{sv}")
        #expect([[UInt32]].dbusSignature == "aau")
        #expect([ObjectPath: [String: Int64]].dbusSignature == "a{oa{sx}}")
        #expect(["a", "b"].dbusValue == .array(element: "s", [.string("a"), .string("b")]))
        #expect(throws: DBusError.self) { try [String](dbusValue: .array(element: "u", [])) }
        #expect(throws: DBusError.self) { try UInt32(dbusValue: .int32(1)) }
    }

    @Test func unixFileDescriptorArrivesAsALiveDuplicate() async throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let readEnd = UnixFD(taking: fds[0])
        let writeEnd = UnixFD(taking: fds[1])
        let echoed = try await echo([.unixFD(writeEnd)])
        guard case .unixFD(let received) = echoed.first else {
            Issue.record("no fd came back")
            return
        }
        #expect(received.fileDescriptor != writeEnd.fileDescriptor, "libdbus hands over a duplicate")
        let message = Array("through the bus".utf8)
        #expect(write(received.fileDescriptor, message, message.count) == message.count)
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(readEnd.fileDescriptor, &buffer, buffer.count)
        #expect(Array(buffer.prefix(max(count, 0))) == message)
    }

    @Test func invalidValuesAreRefusedBeforeLibdbusSeesThem() async throws {
        let bad: [Value] = [
            .string("nul\0inside"),
            .array(element: "s", [.string("ok"), .int32(1)]),
            .dictionary(key: "s", value: "v", [DictEntry(.int32(1), .variant(.byte(1)))]),
            .dictionary(key: "as", value: "v", []),
            .structure([]),
        ]
        for value in bad {
            let error = await #expect(throws: DBusError.self) {
                _ = try await client.call(
                    .methodCall(destination: server.uniqueName, path: "/test/echo", interface: "test.Echo",
                                member: "Echo", body: [value]))
            }
            #expect(error?.name == .invalidValue)
        }
        #expect(ObjectPath(rawValue: "no/leading/slash") == nil)
        #expect(ObjectPath(rawValue: "/trailing/") == nil)
        #expect(Signature(rawValue: "a{vs}") == nil)
        #expect(Signature(rawValue: "(") == nil)
    }
}
