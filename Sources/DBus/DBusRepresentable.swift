#if canImport(Glibc)
import Glibc
#endif

/// A Swift type with a fixed D-Bus type: the one encode/decode protocol of
/// this module. `init(dbusValue:)` throws `.invalidSignature` when the value
/// has another type, so a malformed peer reply is an error, never a crash.
public protocol DBusRepresentable: Sendable {
    /// The D-Bus signature every value of this type has.
    static var dbusSignature: Signature { get }
    /// Decodes a value, checking its type.
    init(dbusValue: Value) throws(DBusError)
    /// Encodes this value.
    var dbusValue: Value { get }
}

/// A value wrapped in a D-Bus variant (`v`), as in the `a{sv}` dictionaries
/// that hints, properties and options travel in.
public struct Variant: DBusRepresentable, Hashable {
    public var value: Value
    public init(_ value: Value) { self.value = value }
    public init<T: DBusRepresentable>(_ value: T) { self.value = value.dbusValue }

    public static var dbusSignature: Signature { "v" }
    public init(dbusValue: Value) throws(DBusError) {
        guard case .variant(let inner) = dbusValue else { throw mismatch(dbusValue, Self.self) }
        value = inner
    }
    public var dbusValue: Value { .variant(value) }

    /// The wrapped value decoded as `T`, or nil when it has another type.
    public func get<T: DBusRepresentable>(_ type: T.Type = T.self) -> T? { try? T(dbusValue: value) }
}

func mismatch<T: DBusRepresentable>(_ value: Value, _ type: T.Type) -> DBusError {
    DBusError(.invalidSignature, "expected '\(T.dbusSignature)', got '\(value.signature)'")
}

extension UInt8: DBusRepresentable {
    public static var dbusSignature: Signature { "y" }
    public init(dbusValue: Value) throws(DBusError) {
        guard case .byte(let v) = dbusValue else { throw mismatch(dbusValue, Self.self) }
        self = v
    }
    public var dbusValue: Value { .byte(self) }
}

extension Bool: DBusRepresentable {
    public static var dbusSignature: Signature { "b" }
    public init(dbusValue: Value) throws(DBusError) {
        guard case .boolean(let v) = dbusValue else { throw mismatch(dbusValue, Self.self) }
        self = v
    }
    public var dbusValue: Value { .boolean(self) }
}

extension Int16: DBusRepresentable {
    public static var dbusSignature: Signature { "n" }
    public init(dbusValue: Value) throws(DBusError) {
        guard case .int16(let v) = dbusValue else { throw mismatch(dbusValue, Self.self) }
        self = v
    }
    public var dbusValue: Value { .int16(self) }
}

extension UInt16: DBusRepresentable {
    public static var dbusSignature: Signature { "q" }
    public init(dbusValue: Value) throws(DBusError) {
        guard case .uint16(let v) = dbusValue else { throw mismatch(dbusValue, Self.self) }
        self = v
    }
    public var dbusValue: Value { .uint16(self) }
}

extension Int32: DBusRepresentable {
    public static var dbusSignature: Signature { "i" }
    public init(dbusValue: Value) throws(DBusError) {
        guard case .int32(let v) = dbusValue else { throw mismatch(dbusValue, Self.self) }
        self = v
    }
    public var dbusValue: Value { .int32(self) }
}

extension UInt32: DBusRepresentable {
    public static var dbusSignature: Signature { "u" }
    public init(dbusValue: Value) throws(DBusError) {
        guard case .uint32(let v) = dbusValue else { throw mismatch(dbusValue, Self.self) }
        self = v
    }
    public var dbusValue: Value { .uint32(self) }
}

extension Int64: DBusRepresentable {
    public static var dbusSignature: Signature { "x" }
    public init(dbusValue: Value) throws(DBusError) {
        guard case .int64(let v) = dbusValue else { throw mismatch(dbusValue, Self.self) }
        self = v
    }
    public var dbusValue: Value { .int64(self) }
}

extension UInt64: DBusRepresentable {
    public static var dbusSignature: Signature { "t" }
    public init(dbusValue: Value) throws(DBusError) {
        guard case .uint64(let v) = dbusValue else { throw mismatch(dbusValue, Self.self) }
        self = v
    }
    public var dbusValue: Value { .uint64(self) }
}

extension Double: DBusRepresentable {
    public static var dbusSignature: Signature { "d" }
    public init(dbusValue: Value) throws(DBusError) {
        guard case .double(let v) = dbusValue else { throw mismatch(dbusValue, Self.self) }
        self = v
    }
    public var dbusValue: Value { .double(self) }
}

extension String: DBusRepresentable {
    public static var dbusSignature: Signature { "s" }
    public init(dbusValue: Value) throws(DBusError) {
        guard case .string(let v) = dbusValue else { throw mismatch(dbusValue, Self.self) }
        self = v
    }
    public var dbusValue: Value { .string(self) }
}

extension ObjectPath: DBusRepresentable {
    public static var dbusSignature: Signature { "o" }
    public init(dbusValue: Value) throws(DBusError) {
        guard case .objectPath(let v) = dbusValue else { throw mismatch(dbusValue, Self.self) }
        self = v
    }
    public var dbusValue: Value { .objectPath(self) }
}

extension Signature: DBusRepresentable {
    public static var dbusSignature: Signature { "g" }
    public init(dbusValue: Value) throws(DBusError) {
        guard case .signature(let v) = dbusValue else { throw mismatch(dbusValue, Self.self) }
        self = v
    }
    public var dbusValue: Value { .signature(self) }
}

extension UnixFD: DBusRepresentable {
    public static var dbusSignature: Signature { "h" }
    public convenience init(dbusValue: Value) throws(DBusError) {
        guard case .unixFD(let v) = dbusValue else { throw mismatch(dbusValue, UnixFD.self) }
        self.init(taking: dup(v.fileDescriptor))
    }
    public var dbusValue: Value { .unixFD(self) }
}

extension Array: DBusRepresentable where Element: DBusRepresentable {
    public static var dbusSignature: Signature { Signature(trusted: "a" + Element.dbusSignature.rawValue) }
    public init(dbusValue: Value) throws(DBusError) {
        guard case .array(let element, let items) = dbusValue, element == Element.dbusSignature else {
            throw mismatch(dbusValue, Self.self)
        }
        var result: [Element] = []
        result.reserveCapacity(items.count)
        for item in items { result.append(try Element(dbusValue: item)) }
        self = result
    }
    public var dbusValue: Value { .array(element: Element.dbusSignature, map(\.dbusValue)) }
}

extension Dictionary: DBusRepresentable where Key: DBusRepresentable, Value: DBusRepresentable {
    public static var dbusSignature: Signature {
        Signature(trusted: "a{" + Key.dbusSignature.rawValue + Value.dbusSignature.rawValue + "}")
    }
    public init(dbusValue: DBus.Value) throws(DBusError) {
        guard case .dictionary(let key, let value, let entries) = dbusValue,
            key == Key.dbusSignature, value == Value.dbusSignature
        else { throw mismatch(dbusValue, Self.self) }
        var result: [Key: Value] = [:]
        for entry in entries { result[try Key(dbusValue: entry.key)] = try Value(dbusValue: entry.value) }
        self = result
    }
    /// Entries are sent sorted by their encoded key, so equal dictionaries make equal messages.
    public var dbusValue: DBus.Value {
        let entries = map { DictEntry($0.key.dbusValue, $0.value.dbusValue) }
            .sorted { "\($0.key)" < "\($1.key)" }
        return .dictionary(key: Key.dbusSignature, value: Value.dbusSignature, entries)
    }
}
