import CDBus

/// Moves `Value`s in and out of libdbus message iterators. Values are checked
/// with `Value.validate()` before they are appended, so libdbus never sees a
/// value it would abort on; a failing append can then only mean out of memory.
enum MessageCodec {
    static func append(_ values: [Value], to message: OpaquePointer) throws(DBusError) {
        for value in values { try value.validate() }
        var iterator = DBusMessageIter()
        dbus_message_iter_init_append(message, &iterator)
        for value in values { try append(value, to: &iterator) }
    }

    private static func typeCode(_ character: Character) -> Int32 { Int32(character.asciiValue!) }

    private static func appendBasic<T: BitwiseCopyable>(
        _ type: Character, _ value: T, to iterator: inout DBusMessageIter
    ) throws(DBusError) {
        var copy = value
        let ok = withUnsafeMutablePointer(to: &copy) { dbus_message_iter_append_basic(&iterator, typeCode(type), $0) }
        guard ok != 0 else {
            throw DBusError(.noMemory, "out of memory appending a D-Bus value")
        }
    }

    private static func appendString(_ type: Character, _ text: String, to iterator: inout DBusMessageIter)
        throws(DBusError)
    {
        let ok = text.withCString { cText in
            var pointer: UnsafePointer<CChar>? = cText
            return dbus_message_iter_append_basic(&iterator, typeCode(type), &pointer)
        }
        guard ok != 0 else { throw DBusError(.noMemory, "out of memory appending a D-Bus string") }
    }

    private static func withContainer(
        _ type: Character, _ contained: Signature?, in iterator: inout DBusMessageIter,
        _ body: (inout DBusMessageIter) throws(DBusError) -> Void
    ) throws(DBusError) {
        var sub = DBusMessageIter()
        let opened: dbus_bool_t
        if let contained {
            opened = contained.rawValue.withCString { dbus_message_iter_open_container(&iterator, typeCode(type), $0, &sub) }
        } else {
            opened = dbus_message_iter_open_container(&iterator, typeCode(type), nil, &sub)
        }
        guard opened != 0 else { throw DBusError(.noMemory, "out of memory opening a D-Bus container") }
        do {
            try body(&sub)
        } catch {
            dbus_message_iter_abandon_container(&iterator, &sub)
            throw error
        }
        guard dbus_message_iter_close_container(&iterator, &sub) != 0 else {
            throw DBusError(.noMemory, "out of memory closing a D-Bus container")
        }
    }

    private static func append(_ value: Value, to iterator: inout DBusMessageIter) throws(DBusError) {
        switch value {
        case .byte(let v): try appendBasic("y", v, to: &iterator)
        case .boolean(let v): try appendBasic("b", dbus_bool_t(v ? 1 : 0), to: &iterator)
        case .int16(let v): try appendBasic("n", v, to: &iterator)
        case .uint16(let v): try appendBasic("q", v, to: &iterator)
        case .int32(let v): try appendBasic("i", v, to: &iterator)
        case .uint32(let v): try appendBasic("u", v, to: &iterator)
        case .int64(let v): try appendBasic("x", v, to: &iterator)
        case .uint64(let v): try appendBasic("t", v, to: &iterator)
        case .double(let v): try appendBasic("d", v, to: &iterator)
        case .unixFD(let fd): try appendBasic("h", fd.fileDescriptor, to: &iterator)
        case .string(let v): try appendString("s", v, to: &iterator)
        case .objectPath(let v): try appendString("o", v.rawValue, to: &iterator)
        case .signature(let v): try appendString("g", v.rawValue, to: &iterator)
        case .array(let element, let items):
            try withContainer("a", element, in: &iterator) { (sub) throws(DBusError) in
                for item in items { try append(item, to: &sub) }
            }
        case .dictionary(let key, let valueType, let entries):
            let entrySignature = Signature(trusted: "{" + key.rawValue + valueType.rawValue + "}")
            try withContainer("a", entrySignature, in: &iterator) { (sub) throws(DBusError) in
                for entry in entries {
                    try withContainer("e", nil, in: &sub) { (pair) throws(DBusError) in
                        try append(entry.key, to: &pair)
                        try append(entry.value, to: &pair)
                    }
                }
            }
        case .structure(let fields):
            try withContainer("r", nil, in: &iterator) { (sub) throws(DBusError) in
                for field in fields { try append(field, to: &sub) }
            }
        case .variant(let inner):
            try withContainer("v", inner.signature, in: &iterator) { (sub) throws(DBusError) in
                try append(inner, to: &sub)
            }
        }
    }

    /// Decodes every argument of a message. libdbus has already checked the
    /// body against its signature when the message arrived.
    static func decodeBody(of message: OpaquePointer) -> [Value] {
        var iterator = DBusMessageIter()
        guard dbus_message_iter_init(message, &iterator) != 0 else { return [] }
        return decodeSequence(&iterator)
    }

    private static func decodeSequence(_ iterator: inout DBusMessageIter) -> [Value] {
        var values: [Value] = []
        while dbus_message_iter_get_arg_type(&iterator) != 0 {
            values.append(decodeOne(&iterator))
            dbus_message_iter_next(&iterator)
        }
        return values
    }

    private static func basic<T: BitwiseCopyable>(_ iterator: inout DBusMessageIter, _ initial: T) -> T {
        var value = initial
        withUnsafeMutablePointer(to: &value) { dbus_message_iter_get_basic(&iterator, $0) }
        return value
    }

    private static func string(_ iterator: inout DBusMessageIter) -> String {
        var pointer: UnsafePointer<CChar>? = nil
        dbus_message_iter_get_basic(&iterator, &pointer)
        return pointer.map { String(cString: $0) } ?? ""
    }

    private static func currentSignature(_ iterator: inout DBusMessageIter) -> String {
        guard let raw = dbus_message_iter_get_signature(&iterator) else { return "" }
        defer { dbus_free(raw) }
        return String(cString: raw)
    }

    private static func decodeOne(_ iterator: inout DBusMessageIter) -> Value {
        let type = UInt8(truncatingIfNeeded: dbus_message_iter_get_arg_type(&iterator))
        switch Character(Unicode.Scalar(type)) {
        case "y": return .byte(basic(&iterator, UInt8(0)))
        case "b": return .boolean(basic(&iterator, dbus_bool_t(0)) != 0)
        case "n": return .int16(basic(&iterator, Int16(0)))
        case "q": return .uint16(basic(&iterator, UInt16(0)))
        case "i": return .int32(basic(&iterator, Int32(0)))
        case "u": return .uint32(basic(&iterator, UInt32(0)))
        case "x": return .int64(basic(&iterator, Int64(0)))
        case "t": return .uint64(basic(&iterator, UInt64(0)))
        case "d": return .double(basic(&iterator, Double(0)))
        case "h": return .unixFD(UnixFD(taking: basic(&iterator, Int32(-1))))
        case "s": return .string(string(&iterator))
        case "o": return .objectPath(ObjectPath(rawValue: string(&iterator)) ?? .root)
        case "g": return .signature(Signature(trusted: string(&iterator)))
        case "a":
            let signature = currentSignature(&iterator)
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &sub)
            if signature.hasPrefix("a{") {
                let inner = signature.dropFirst(2).dropLast()
                let key = Signature(trusted: String(inner.prefix(1)))
                let valueType = Signature(trusted: String(inner.dropFirst()))
                var entries: [DictEntry] = []
                while dbus_message_iter_get_arg_type(&sub) != 0 {
                    var pair = DBusMessageIter()
                    dbus_message_iter_recurse(&sub, &pair)
                    let k = decodeOne(&pair)
                    dbus_message_iter_next(&pair)
                    entries.append(DictEntry(k, decodeOne(&pair)))
                    dbus_message_iter_next(&sub)
                }
                return .dictionary(key: key, value: valueType, entries)
            }
            return .array(element: Signature(trusted: String(signature.dropFirst())), decodeSequence(&sub))
        case "r", "(":
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &sub)
            return .structure(decodeSequence(&sub))
        case "v":
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &sub)
            return .variant(decodeOne(&sub))
        default:
            // libdbus validates every incoming message against the type codes
            // of the specification, all of which are handled above.
            preconditionFailure("libdbus delivered unknown type code \(type)")
        }
    }
}
