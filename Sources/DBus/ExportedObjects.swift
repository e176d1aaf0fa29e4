import CDBus
import EventLoop

/// One interface of an object this connection exports: its methods,
/// properties and signals. Handlers run on the connection's loop.
public struct Interface {
    public var name: String
    public var methods: [Method]
    public var properties: [Property]
    public var signals: [SignalDescription]

    public init(name: String, methods: [Method] = [], properties: [Property] = [], signals: [SignalDescription] = []) {
        self.name = name
        self.methods = methods
        self.properties = properties
        self.signals = signals
    }

    /// A method: its argument and result signatures, and its handler.
    public struct Method {
        public var name: String
        public var input: Signature
        public var output: Signature
        public var handler: (MethodInvocation) -> Void

        /// A method that answers when its handler calls `reply` or `fail`
        /// (possibly later, for work that waits on something).
        public init(_ name: String, input: Signature = .empty, output: Signature = .empty,
                    handler: @escaping (MethodInvocation) -> Void) {
            self.name = name
            self.input = input
            self.output = output
            self.handler = handler
        }

        /// A method that answers at once with what `body` returns or throws.
        public init(_ name: String, input: Signature = .empty, output: Signature = .empty,
                    returning body: @escaping (Message) throws(DBusError) -> [Value]) {
            self.init(name, input: input, output: output) { invocation in
                do throws(DBusError) { invocation.reply(try body(invocation.message)) } catch { invocation.fail(error) }
            }
        }
    }

    /// A property with a getter and, when writable, a setter.
    public struct Property {
        public var name: String
        public var signature: Signature
        public var get: () -> Value
        public var set: ((Value) throws(DBusError) -> Void)?

        public init(_ name: String, signature: Signature, get: @escaping () -> Value,
                    set: ((Value) throws(DBusError) -> Void)? = nil) {
            self.name = name
            self.signature = signature
            self.get = get
            self.set = set
        }
    }

    /// A signal the interface emits, for introspection.
    public struct SignalDescription {
        public var name: String
        public var signature: Signature
        public init(_ name: String, signature: Signature = .empty) {
            self.name = name
            self.signature = signature
        }
    }
}

/// An incoming method call waiting for its answer. Answer exactly once, on the
/// connection's loop; a second answer is ignored.
///
/// Guard for `@unchecked Sendable`: it may be carried to a later moment, but
/// `answered` is read and written only on the connection's loop.
public final class MethodInvocation: @unchecked Sendable {
    public let message: Message
    private weak var connection: Connection?
    private let output: Signature
    private var answered = false

    init(message: Message, connection: Connection, output: Signature) {
        self.message = message
        self.connection = connection
        self.output = output
    }

    /// Replies with `values`, which must have the method's output signature.
    public func reply(_ values: [Value] = []) {
        let reply = Message.methodReturn(to: message, body: values)
        guard reply.signature == output else {
            return fail(DBusError(.failed, "internal error: reply '\(reply.signature)' is not '\(output)'"))
        }
        answer(reply)
    }

    /// Replies with a D-Bus error.
    public func fail(_ error: DBusError) { answer(.error(to: message, error)) }

    private func answer(_ reply: Message) {
        connection?.loop.preconditionIsCurrent("a D-Bus invocation")
        guard !answered else { return }
        answered = true
        guard !message.noReplyExpected else { return }
        _ = try? connection?.send(reply)
    }
}

extension Connection {
    /// Exports `interfaces` at `path` (on `loop`), replacing any there. The
    /// standard Properties, Introspectable and Peer interfaces come with them.
    public func export(_ interfaces: [Interface], at path: ObjectPath) {
        loop.preconditionIsCurrent("a D-Bus connection")
        objects[path] = Dictionary(interfaces.map { ($0.name, $0) }, uniquingKeysWith: { $1 })
    }

    /// Removes the object at `path` (on `loop`).
    public func unexport(_ path: ObjectPath) {
        loop.preconditionIsCurrent("a D-Bus connection")
        objects[path] = nil
    }

    /// Emits `PropertiesChanged` for `interface` at `path`, reading each named
    /// property's current value (on `loop`).
    public func emitPropertiesChanged(path: ObjectPath, interface: String, changed names: [String]) throws(DBusError) {
        loop.preconditionIsCurrent("a D-Bus connection")
        guard let exported = objects[path]?[interface] else {
            throw DBusError(.unknownInterface, "\(path) does not export \(interface)")
        }
        let entries = names.compactMap { name in
            exported.properties.first { $0.name == name }.map { DictEntry(.string(name), .variant($0.get())) }
        }
        try emit(
            path: path, interface: Self.propertiesInterface, member: "PropertiesChanged",
            body: [
                .string(interface), .dictionary(key: "s", value: "v", entries), .array(element: "s", []),
            ])
    }

    static let propertiesInterface = StandardNames.properties
    static let introspectableInterface = StandardNames.introspectable

    func handleMethodCall(_ raw: OpaquePointer) -> Bool {
        guard let pathText = dbus_message_get_path(raw).map({ String(cString: $0) }),
            let path = ObjectPath(rawValue: pathText)
        else { return false }
        let interfaceName = dbus_message_get_interface(raw).map { String(cString: $0) }
        if interfaceName == Self.introspectableInterface || interfaceName == nil,
            dbus_message_has_member(raw, "Introspect") != 0
        {
            guard objects[path] != nil || !childNodes(of: path).isEmpty else { return false }
            let invocation = MethodInvocation(message: Message(reading: raw), connection: self, output: "s")
            invocation.reply([.string(introspectionXML(for: path))])
            return true
        }
        guard let interfaces = objects[path] else { return false }
        let message = Message(reading: raw)
        if interfaceName == Self.propertiesInterface {
            handleProperties(message, interfaces)
            return true
        }
        let candidates = interfaceName.map { interfaces[$0].map { [$0] } ?? [] } ?? Array(interfaces.values)
        guard let method = candidates.lazy.compactMap({ $0.methods.first { $0.name == message.member } }).first
        else {
            return false
        }
        let invocation = MethodInvocation(message: message, connection: self, output: method.output)
        guard message.signature == method.input else {
            invocation.fail(
                DBusError(.invalidArgs, "\(method.name) takes '\(method.input)', got '\(message.signature)'"))
            return true
        }
        method.handler(invocation)
        return true
    }

    private func handleProperties(_ message: Message, _ interfaces: [String: Interface]) {
        func lookup(_ interfaceName: String) throws(DBusError) -> Interface {
            guard let found = interfaces[interfaceName] else {
                throw DBusError(.unknownInterface, "no interface \(interfaceName) here")
            }
            return found
        }
        func property(_ interfaceName: String, _ name: String) throws(DBusError) -> Interface.Property {
            guard let found = try lookup(interfaceName).properties.first(where: { $0.name == name }) else {
                throw DBusError(.unknownProperty, "no property \(name) on \(interfaceName)")
            }
            return found
        }
        let output: Signature =
            switch message.member {
            case "Get": "v"
            case "GetAll": "a{sv}"
            default: .empty
            }
        let invocation = MethodInvocation(message: message, connection: self, output: output)
        do throws(DBusError) {
            switch message.member {
            case "Get":
                try message.expect("ss")
                invocation.reply([.variant(try property(message.argument(0), message.argument(1)).get())])
            case "GetAll":
                try message.expect("s")
                let entries = try lookup(message.argument(0)).properties.map {
                    DictEntry(.string($0.name), .variant($0.get()))
                }
                invocation.reply([.dictionary(key: "s", value: "v", entries)])
            case "Set":
                try message.expect("ssv")
                let target = try property(message.argument(0), message.argument(1))
                guard let set = target.set else {
                    throw DBusError(.propertyReadOnly, "\(target.name) is read-only")
                }
                let newValue = try message.argument(2, as: Variant.self).value
                guard newValue.signature == target.signature else {
                    throw DBusError(.invalidArgs, "\(target.name) is '\(target.signature)', got '\(newValue.signature)'")
                }
                try set(newValue)
                invocation.reply()
            default:
                throw DBusError(.unknownMethod, "no method \(message.member ?? "") on \(Self.propertiesInterface)")
            }
        } catch {
            invocation.fail(error.name == .invalidSignature ? DBusError(.invalidArgs, error.message) : error)
        }
    }

    private func childNodes(of path: ObjectPath) -> [String] {
        let prefix = path == .root ? "/" : path.rawValue + "/"
        let names = objects.keys.compactMap { child -> String? in
            guard child.rawValue.hasPrefix(prefix), child != path else { return nil }
            return child.rawValue.dropFirst(prefix.count).split(separator: "/").first.map(String.init)
        }
        return Array(Set(names)).sorted()
    }

    /// The introspection document for `path`: its interfaces and child nodes.
    func introspectionXML(for path: ObjectPath) -> String {
        func escape(_ text: String) -> String {
            text.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing(">", with: "&gt;")
                .replacing("\"", with: "&quot;")
        }
        func args(_ signature: Signature, direction: String?) -> [String] {
            SignatureSplitter.completeTypes(of: signature).map { type in
                let dir = direction.map { " direction=\"\($0)\"" } ?? ""
                return "      <arg type=\"\(escape(type))\"\(dir)/>"
            }
        }
        var lines = [
            "<!DOCTYPE node PUBLIC \"-//freedesktop//DTD D-BUS Object Introspection 1.0//EN\"",
            " \"http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd\">",
            "<node>",
        ]
        if let interfaces = objects[path] {
            lines += Self.standardInterfacesXML
            for interface in interfaces.values.sorted(by: { $0.name < $1.name }) {
                lines.append("  <interface name=\"\(escape(interface.name))\">")
                for method in interface.methods {
                    lines.append("    <method name=\"\(escape(method.name))\">")
                    lines += args(method.input, direction: "in") + args(method.output, direction: "out")
                    lines.append("    </method>")
                }
                for signal in interface.signals {
                    lines.append("    <signal name=\"\(escape(signal.name))\">")
                    lines += args(signal.signature, direction: nil)
                    lines.append("    </signal>")
                }
                for property in interface.properties {
                    let access = property.set == nil ? "read" : "readwrite"
                    lines.append(
                        "    <property name=\"\(escape(property.name))\" type=\"\(escape(property.signature.rawValue))\" access=\"\(access)\"/>"
                    )
                }
                lines.append("  </interface>")
            }
        }
        for child in childNodes(of: path) { lines.append("  <node name=\"\(escape(child))\"/>") }
        lines.append("</node>")
        return lines.joined(separator: "\n") + "\n"
    }

    private static let standardInterfacesXML = [
        "  <interface name=\"org.freedesktop.DBus.Properties\">",
        "    <method name=\"Get\"><arg type=\"s\" direction=\"in\"/><arg type=\"s\" direction=\"in\"/><arg type=\"v\" direction=\"out\"/></method>",
        "    <method name=\"GetAll\"><arg type=\"s\" direction=\"in\"/><arg type=\"a{sv}\" direction=\"out\"/></method>",
        "    <method name=\"Set\"><arg type=\"s\" direction=\"in\"/><arg type=\"s\" direction=\"in\"/><arg type=\"v\" direction=\"in\"/></method>",
        "    <signal name=\"PropertiesChanged\"><arg type=\"s\"/><arg type=\"a{sv}\"/><arg type=\"as\"/></signal>",
        "  </interface>",
        "  <interface name=\"org.freedesktop.DBus.Introspectable\">",
        "    <method name=\"Introspect\"><arg type=\"s\" direction=\"out\"/></method>",
        "  </interface>",
        "  <interface name=\"org.freedesktop.DBus.Peer\">",
        "    <method name=\"Ping\"/>",
        "    <method name=\"GetMachineId\"><arg type=\"s\" direction=\"out\"/></method>",
        "  </interface>",
    ]
}

/// Splits a signature into its complete types, using libdbus's signature iterator.
enum SignatureSplitter {
    static func completeTypes(of signature: Signature) -> [String] {
        guard !signature.rawValue.isEmpty else { return [] }
        return signature.rawValue.withCString { cSignature in
            var iterator = DBusSignatureIter()
            dbus_signature_iter_init(&iterator, cSignature)
            var types: [String] = []
            repeat {
                if let raw = dbus_signature_iter_get_signature(&iterator) {
                    types.append(String(cString: raw))
                    dbus_free(raw)
                }
            } while dbus_signature_iter_next(&iterator) != 0
            return types
        }
    }
}
