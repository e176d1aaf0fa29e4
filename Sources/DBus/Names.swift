import CDBus

/// A validated D-Bus object path such as `/org/freedesktop/Notifications`.
public struct ObjectPath: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    public let rawValue: String

    /// Validates `rawValue`; returns nil when it is not an object path.
    public init?(rawValue: String) {
        guard (try? validate(rawValue, as: "object path", with: { dbus_validate_path($0, $1) })) != nil else {
            return nil
        }
        self.rawValue = rawValue
    }

    /// Validates `text`, throwing `.invalidValue` when it is not an object path.
    public init(validating text: String) throws(DBusError) {
        try validate(text, as: "object path", with: { dbus_validate_path($0, $1) })
        rawValue = text
    }

    /// A path written in the source; a malformed literal is a programming error.
    public init(stringLiteral value: String) {
        guard let path = ObjectPath(rawValue: value) else { preconditionFailure("invalid object path literal \(value)") }
        self = path
    }

    public static let root = ObjectPath(stringLiteral: "/")

    public var description: String { rawValue }
    public static func < (lhs: ObjectPath, rhs: ObjectPath) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A validated D-Bus type signature such as `a{sv}` (zero or more complete types).
public struct Signature: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String

    /// Validates `rawValue`; returns nil when it is not a signature.
    public init?(rawValue: String) {
        guard (try? validate(rawValue, as: "signature", with: { dbus_signature_validate($0, $1) })) != nil else {
            return nil
        }
        self.rawValue = rawValue
    }

    /// A signature written in the source; a malformed literal is a programming error.
    public init(stringLiteral value: String) {
        guard let signature = Signature(rawValue: value) else {
            preconditionFailure("invalid signature literal \(value)")
        }
        self = signature
    }

    /// Concatenates already valid signatures (the signature of a message body).
    init(concatenating parts: [Signature]) {
        rawValue = parts.map(\.rawValue).joined()
    }

    /// Wraps a signature libdbus produced, which is valid by construction.
    init(trusted text: String) { rawValue = text }

    public static let empty = Signature(concatenating: [])

    public var description: String { rawValue }
}

/// Checks the names that message headers carry.
enum NameCheck {
    static func busName(_ name: String) throws(DBusError) {
        try validate(name, as: "bus name", with: { dbus_validate_bus_name($0, $1) })
    }
    static func interface(_ name: String) throws(DBusError) {
        try validate(name, as: "interface name", with: { dbus_validate_interface($0, $1) })
    }
    static func member(_ name: String) throws(DBusError) {
        try validate(name, as: "member name", with: { dbus_validate_member($0, $1) })
    }
    static func errorName(_ name: String) throws(DBusError) {
        try validate(name, as: "error name", with: { dbus_validate_error_name($0, $1) })
    }
}
