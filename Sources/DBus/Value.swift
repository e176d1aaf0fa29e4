import CDBus
#if canImport(Glibc)
import Glibc
#endif

/// One D-Bus value of any type, with its type carried alongside.
///
/// Containers record their element signature, so an empty array still knows
/// what it is an array of. `validated()` checks that the elements agree with
/// it before anything reaches libdbus.
public indirect enum Value: Hashable, Sendable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(ObjectPath)
    case signature(Signature)
    case unixFD(UnixFD)
    /// An array whose elements all have the single complete type `element`.
    case array(element: Signature, [Value])
    /// A dictionary (`a{kv}`): `key` is a basic type, entries in order.
    case dictionary(key: Signature, value: Signature, [DictEntry])
    case structure([Value])
    case variant(Value)

    /// The D-Bus type signature of this value.
    public var signature: Signature {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .array(let element, _): Signature(trusted: "a" + element.rawValue)
        case .dictionary(let key, let value, _): Signature(trusted: "a{" + key.rawValue + value.rawValue + "}")
        case .structure(let fields): Signature(trusted: "(" + fields.map(\.signature.rawValue).joined() + ")")
        case .variant: "v"
        }
    }

    /// Checks that every container agrees with its declared signature and that
    /// every string can travel (no NUL). Throws `.invalidValue` otherwise.
    public func validate() throws(DBusError) {
        switch self {
        case .string(let text):
            if text.utf8.contains(0) { throw DBusError(.invalidValue, "a D-Bus string cannot contain NUL") }
        case .array(let element, let items):
            try Value.checkSingle(element)
            for item in items {
                guard item.signature == element else {
                    throw DBusError(.invalidValue, "array of '\(element)' holds a '\(item.signature)'")
                }
                try item.validate()
            }
        case .dictionary(let key, let value, let entries):
            guard key.rawValue.count == 1, "ybnqiuxtdsogh".contains(key.rawValue) else {
                throw DBusError(.invalidValue, "dictionary key '\(key)' is not a basic type")
            }
            try Value.checkSingle(value)
            for entry in entries {
                guard entry.key.signature == key, entry.value.signature == value else {
                    throw DBusError(
                        .invalidValue,
                        "dictionary a{\(key)\(value)} holds {\(entry.key.signature)\(entry.value.signature)}")
                }
                try entry.key.validate()
                try entry.value.validate()
            }
        case .structure(let fields):
            if fields.isEmpty { throw DBusError(.invalidValue, "a D-Bus struct needs at least one field") }
            for field in fields { try field.validate() }
        case .variant(let inner):
            try inner.validate()
        default:
            break
        }
    }

    private static func checkSingle(_ signature: Signature) throws(DBusError) {
        try DBus.validate(signature.rawValue, as: "single complete type", with: { dbus_signature_validate_single($0, $1) })
    }
}

/// One entry of a D-Bus dictionary.
public struct DictEntry: Hashable, Sendable {
    public var key: Value
    public var value: Value
    public init(_ key: Value, _ value: Value) {
        self.key = key
        self.value = value
    }
}

/// A file descriptor received in or sent with a message.
///
/// Ownership: the descriptor belongs to this object and is closed when the
/// last reference goes away. libdbus duplicates it when it is sent, and hands
/// over a fresh duplicate when one is received.
public final class UnixFD: Hashable, Sendable {
    public let fileDescriptor: Int32

    /// Takes ownership of `fileDescriptor`.
    public init(taking fileDescriptor: Int32) { self.fileDescriptor = fileDescriptor }

    deinit { close(fileDescriptor) }

    public static func == (lhs: UnixFD, rhs: UnixFD) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
