import CDBus

/// A D-Bus message as plain Swift data: headers and a decoded body.
///
/// Messages are built with the static constructors, sent through a
/// `Connection`, and come back decoded; the libdbus message they travel in
/// never leaves this module.
public struct Message: Sendable {
    /// The four message types of the specification.
    public enum Kind: Sendable, Hashable {
        case methodCall, methodReturn, error, signal
    }

    public var kind: Kind
    public var path: ObjectPath?
    public var interface: String?
    public var member: String?
    public var errorName: String?
    public var destination: String?
    /// The unique name of the sending connection (set by the bus).
    public var sender: String?
    public var serial: UInt32 = 0
    public var replySerial: UInt32 = 0
    /// A method call that wants no reply.
    public var noReplyExpected = false
    public var body: [Value]

    /// The signature of the body.
    public var signature: Signature { Signature(concatenating: body.map(\.signature)) }

    /// A method call to `destination`.
    public static func methodCall(
        destination: String?, path: ObjectPath, interface: String?, member: String, body: [Value] = []
    ) -> Message {
        Message(
            kind: .methodCall, path: path, interface: interface, member: member, destination: destination,
            body: body)
    }

    /// A signal emitted from `path`.
    public static func signal(path: ObjectPath, interface: String, member: String, body: [Value] = []) -> Message {
        Message(kind: .signal, path: path, interface: interface, member: member, body: body)
    }

    /// The successful reply to `call`.
    public static func methodReturn(to call: Message, body: [Value] = []) -> Message {
        Message(kind: .methodReturn, destination: call.sender, replySerial: call.serial, body: body)
    }

    /// The error reply to `call`.
    public static func error(to call: Message, _ error: DBusError) -> Message {
        Message(
            kind: .error, errorName: error.name.rawValue, destination: call.sender, replySerial: call.serial,
            body: [.string(error.message)])
    }

    /// Throws `.invalidSignature` unless the body has exactly `expected` as signature.
    public func expect(_ expected: Signature) throws(DBusError) {
        guard signature == expected else {
            throw DBusError(
                .invalidSignature,
                "\(member ?? "reply") has signature '\(signature)', expected '\(expected)'")
        }
    }

    /// Decodes argument `index` as `T`, or throws `.invalidSignature`.
    public func argument<T: DBusRepresentable>(_ index: Int, as type: T.Type = T.self) throws(DBusError) -> T {
        guard body.indices.contains(index) else {
            throw DBusError(.invalidSignature, "\(member ?? "reply") has no argument \(index) (signature '\(signature)')")
        }
        return try T(dbusValue: body[index])
    }

    /// For an error message, the error it carries.
    var asError: DBusError {
        let text: String
        if case .string(let first)? = body.first { text = first } else { text = "" }
        return DBusError(DBusError.Name(rawValue: errorName ?? DBusError.Name.failed.rawValue), text)
    }
}

/// Conversion between `Message` and libdbus's `DBusMessage`.
extension Message {
    /// Reads a libdbus message. The caller keeps its reference.
    init(reading raw: OpaquePointer) {
        func text(_ pointer: UnsafePointer<CChar>?) -> String? { pointer.map { String(cString: $0) } }
        let kind: Kind
        switch dbus_message_get_type(raw) {
        case CDBUS_MESSAGE_TYPE_METHOD_CALL: kind = .methodCall
        case CDBUS_MESSAGE_TYPE_METHOD_RETURN: kind = .methodReturn
        case CDBUS_MESSAGE_TYPE_ERROR: kind = .error
        default: kind = .signal
        }
        self.init(
            kind: kind,
            path: text(dbus_message_get_path(raw)).flatMap { ObjectPath(rawValue: $0) },
            interface: text(dbus_message_get_interface(raw)),
            member: text(dbus_message_get_member(raw)),
            errorName: text(dbus_message_get_error_name(raw)),
            destination: text(dbus_message_get_destination(raw)),
            sender: text(dbus_message_get_sender(raw)),
            serial: dbus_message_get_serial(raw),
            replySerial: dbus_message_get_reply_serial(raw),
            noReplyExpected: dbus_message_get_no_reply(raw) != 0,
            body: MessageCodec.decodeBody(of: raw))
    }

    /// Builds a new libdbus message (one reference, owned by the caller).
    func makeRaw() throws(DBusError) -> OpaquePointer {
        switch kind {
        case .methodCall where path == nil || member == nil,
            .signal where path == nil || interface == nil || member == nil,
            .error where errorName == nil || replySerial == 0,
            .methodReturn where replySerial == 0:
            throw DBusError(.invalidValue, "a \(kind) message lacks a required header")
        default: break
        }
        if let destination { try NameCheck.busName(destination) }
        if let interface { try NameCheck.interface(interface) }
        if let member { try NameCheck.member(member) }
        if let errorName { try NameCheck.errorName(errorName) }
        let type: Int32
        switch kind {
        case .methodCall: type = CDBUS_MESSAGE_TYPE_METHOD_CALL
        case .methodReturn: type = CDBUS_MESSAGE_TYPE_METHOD_RETURN
        case .error: type = CDBUS_MESSAGE_TYPE_ERROR
        case .signal: type = CDBUS_MESSAGE_TYPE_SIGNAL
        }
        guard let raw = dbus_message_new(type) else { throw DBusError(.noMemory, "out of memory creating a message") }
        var ok = true
        if let path { ok = ok && dbus_message_set_path(raw, path.rawValue) != 0 }
        if let interface { ok = ok && dbus_message_set_interface(raw, interface) != 0 }
        if let member { ok = ok && dbus_message_set_member(raw, member) != 0 }
        if let errorName { ok = ok && dbus_message_set_error_name(raw, errorName) != 0 }
        if let destination { ok = ok && dbus_message_set_destination(raw, destination) != 0 }
        if replySerial != 0 { ok = ok && dbus_message_set_reply_serial(raw, replySerial) != 0 }
        if noReplyExpected || kind == .methodReturn || kind == .error { dbus_message_set_no_reply(raw, 1) }
        guard ok else {
            dbus_message_unref(raw)
            throw DBusError(.noMemory, "out of memory setting message headers")
        }
        do {
            try MessageCodec.append(body, to: raw)
        } catch {
            dbus_message_unref(raw)
            throw error
        }
        return raw
    }
}
