/// The bus daemon's and the standard interfaces' names, spelled once.
public enum StandardNames {
    /// The message bus itself (`GetNameOwner`, `RequestName`, `GetConnectionUnixProcessID` …).
    public static let bus = "org.freedesktop.DBus"
    public static let busPath: ObjectPath = "/org/freedesktop/DBus"
    public static let properties = "org.freedesktop.DBus.Properties"
    public static let introspectable = "org.freedesktop.DBus.Introspectable"
    public static let peer = "org.freedesktop.DBus.Peer"
}

/// A client of another object's `org.freedesktop.DBus.Properties` (on `loop`,
/// completion calls like the rest of `Connection`).
extension Connection {
    /// `Get`: one property's value.
    public func property(_ destination: String, _ path: ObjectPath, _ interface: String, _ name: String,
                         completion: @escaping (Result<Variant, DBusError>) -> Void) {
        call(.methodCall(
            destination: destination, path: path, interface: StandardNames.properties, member: "Get",
            body: [.string(interface), .string(name)])
        ) { result in
            completion(result.flatMap { reply in
                do throws(DBusError) { return .success(try reply.argument(0, as: Variant.self)) } catch { return .failure(error) }
            })
        }
    }

    /// `GetAll`: every property of `interface`.
    public func allProperties(_ destination: String, _ path: ObjectPath, _ interface: String,
                              completion: @escaping (Result<[String: Variant], DBusError>) -> Void) {
        call(.methodCall(
            destination: destination, path: path, interface: StandardNames.properties, member: "GetAll",
            body: [.string(interface)])
        ) { result in
            completion(result.flatMap { reply in
                do throws(DBusError) { return .success(try reply.argument(0, as: [String: Variant].self)) } catch { return .failure(error) }
            })
        }
    }

    /// `Set`: writes one property; `completion` hears the error, if any.
    public func setProperty(_ destination: String, _ path: ObjectPath, _ interface: String, _ name: String, _ value: Value,
                            completion: @escaping (DBusError?) -> Void) {
        call(.methodCall(
            destination: destination, path: path, interface: StandardNames.properties, member: "Set",
            body: [.string(interface), .string(name), .variant(value)])
        ) { result in
            if case .failure(let error) = result { completion(error) } else { completion(nil) }
        }
    }
}

extension MatchRule {
    /// `PropertiesChanged` of the object at `path` sent by `sender` (of `interface`'s properties only, when given).
    public static func propertiesChanged(sender: String, path: ObjectPath, of interface: String? = nil) -> MatchRule {
        MatchRule(sender: sender, path: path, interface: StandardNames.properties, member: "PropertiesChanged", arg0: interface)
    }
}
