import CDBus

/// A D-Bus error: a well-known error name and a human-readable message.
///
/// Errors that come from the bus or a peer keep their name; errors this module
/// raises itself use the `io.github.ccrelay.DBus.Error.*` names below.
public struct DBusError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The error name, such as `org.freedesktop.DBus.Error.ServiceUnknown`.
    public var name: Name
    /// The peer's or libdbus's explanation, for logs and users.
    public var message: String

    public init(_ name: Name, _ message: String) {
        self.name = name
        self.message = message
    }

    public var description: String { "\(name.rawValue): \(message)" }

    /// A D-Bus error name; the common ones are static members.
    public struct Name: RawRepresentable, Hashable, Sendable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        public static let failed = Name(rawValue: "org.freedesktop.DBus.Error.Failed")
        public static let noReply = Name(rawValue: "org.freedesktop.DBus.Error.NoReply")
        public static let timeout = Name(rawValue: "org.freedesktop.DBus.Error.Timeout")
        public static let serviceUnknown = Name(rawValue: "org.freedesktop.DBus.Error.ServiceUnknown")
        public static let nameHasNoOwner = Name(rawValue: "org.freedesktop.DBus.Error.NameHasNoOwner")
        public static let unknownMethod = Name(rawValue: "org.freedesktop.DBus.Error.UnknownMethod")
        public static let unknownObject = Name(rawValue: "org.freedesktop.DBus.Error.UnknownObject")
        public static let unknownInterface = Name(rawValue: "org.freedesktop.DBus.Error.UnknownInterface")
        public static let unknownProperty = Name(rawValue: "org.freedesktop.DBus.Error.UnknownProperty")
        public static let propertyReadOnly = Name(rawValue: "org.freedesktop.DBus.Error.PropertyReadOnly")
        public static let invalidArgs = Name(rawValue: "org.freedesktop.DBus.Error.InvalidArgs")
        public static let accessDenied = Name(rawValue: "org.freedesktop.DBus.Error.AccessDenied")
        public static let disconnected = Name(rawValue: "org.freedesktop.DBus.Error.Disconnected")
        public static let noMemory = Name(rawValue: "org.freedesktop.DBus.Error.NoMemory")

        /// A reply or signal whose body does not have the signature the caller expects.
        public static let invalidSignature = Name(rawValue: "io.github.ccrelay.DBus.Error.InvalidSignature")
        /// A value that cannot be sent: a bad name, a string with NUL, elements of mixed types.
        public static let invalidValue = Name(rawValue: "io.github.ccrelay.DBus.Error.InvalidValue")
    }
}

/// The funnel for every libdbus call that reports through a `DBusError *`:
/// runs `body` with an initialised C error and throws it as a Swift error if set.
func withCError<T>(_ body: (UnsafeMutablePointer<CDBus.DBusError>) -> T) throws(DBusError) -> T {
    var cError = CDBus.DBusError()
    dbus_error_init(&cError)
    defer { dbus_error_free(&cError) }
    let result = body(&cError)
    if dbus_error_is_set(&cError) != 0 {
        throw DBusError(
            DBusError.Name(rawValue: cError.name.map { String(cString: $0) } ?? DBusError.Name.failed.rawValue),
            cError.message.map { String(cString: $0) } ?? "")
    }
    return result
}

/// Validates a name with one of libdbus's `dbus_validate_*` functions, which
/// keeps libdbus from aborting the process on a malformed name later.
func validate(
    _ text: String, as kind: String,
    with check: (UnsafePointer<CChar>, UnsafeMutablePointer<CDBus.DBusError>) -> dbus_bool_t
) throws(DBusError) {
    let result = text.withCString { cText in Result { () throws(DBusError) in try withCError { check(cText, $0) } } }
    if (try result.get()) == 0 || text.utf8.contains(0) {
        throw DBusError(.invalidValue, "invalid \(kind) '\(text)'")
    }
}
