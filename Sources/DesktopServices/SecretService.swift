import DBus
import EventLoop

/// What ccrelay keeps in the keyring: the campus password of a user, or the
/// password of a PKCS#12 certificate bundle.
public enum KeyringItem: Sendable, Hashable {
    case campusPassword(user: String)
    /// By the bundle's absolute path.
    case bundlePassword(certificate: String)

    /// `application=ccrelay` and `user=<user>`, or `certificate=<path>`.
    var attributes: [String: String] {
        switch self {
        case .campusPassword(let user): ["application": "ccrelay", "user": user]
        case .bundlePassword(let certificate): ["application": "ccrelay", "certificate": certificate]
        }
    }

    var label: String {
        switch self {
        case .campusPassword(let user): "CC Relay campus password for \(user)"
        case .bundlePassword(let certificate): "CC Relay password of the certificate \(certificate)"
        }
    }
}

/// The campus password and a certificate bundle's password in the desktop
/// keyring, through the freedesktop Secret Service (`org.freedesktop.secrets`:
/// GNOME Keyring, KWallet, KeePassXC).
///
/// Items carry the attributes of their `KeyringItem`. The secret travels in a
/// `plain` session: on the local bus, as the specification allows; a password
/// is never written to a file or argv.
public struct SecretService: Sendable {
    public static let busName = "org.freedesktop.secrets"
    static let path: ObjectPath = "/org/freedesktop/secrets"
    static let service = "org.freedesktop.Secret.Service"

    private let connection: Connection

    public init(connection: Connection) { self.connection = connection }

    /// The stored password of `user` (nil when the keyring has none), handed
    /// to `completion` on the connection's loop; call it there. The daemon
    /// uses this form: no Swift concurrency on its loop.
    public func password(user: String, completion: @escaping (Result<String?, DBusError>) -> Void) {
        secret(.campusPassword(user: user), completion: completion)
    }

    /// The stored secret of `item` (nil when the keyring has none), on the loop.
    public func secret(_ item: KeyringItem, completion: @escaping (Result<String?, DBusError>) -> Void) {
        connection.loop.preconditionIsCurrent()
        request(Self.path, Self.service, "OpenSession", [.string("plain"), .variant(.string(""))], "vo") { opened in
            let session: ObjectPath
            do throws(DBusError) { session = try opened.get().argument(1) } catch { return completion(.failure(error)) }
            let finish = { (result: Result<String?, DBusError>) in
                self.closeSession(session)
                completion(result)
            }
            let fetch = { (items: [ObjectPath]) in
                guard let found = items.first else { return finish(.success(nil)) }
                self.request(Self.path, Self.service, "GetSecrets", [[found].dbusValue, .objectPath(session)], "a{o(oayays)}") {
                    reply in
                    finish(reply.map { reply in
                        guard case .dictionary(_, _, let entries) = reply.body[0], case .structure(let fields)? = entries.first?.value,
                              fields.count == 4, case .array(_, let bytes) = fields[2]
                        else { return nil }
                        return String(decoding: bytes.compactMap { if case .byte(let b) = $0 { b } else { nil } }, as: UTF8.self)
                    })
                }
            }
            self.request(Self.path, Self.service, "SearchItems", [item.attributes.dbusValue], "aoao") { searched in
                let items: [ObjectPath], locked: [ObjectPath]
                do throws(DBusError) {
                    items = try searched.get().argument(0)
                    locked = try searched.get().argument(1)
                } catch {
                    return finish(.failure(error))
                }
                guard items.isEmpty && !locked.isEmpty else { return fetch(items) }
                self.request(Self.path, Self.service, "Unlock", [locked.dbusValue], "aoo") { unlocked in
                    let unlockedItems: [ObjectPath], prompt: ObjectPath
                    do throws(DBusError) {
                        unlockedItems = try unlocked.get().argument(0)
                        prompt = try unlocked.get().argument(1)
                    } catch {
                        return finish(.failure(error))
                    }
                    guard prompt != .root else { return fetch(unlockedItems) }
                    self.prompt(prompt) { dismissed in
                        switch dismissed {
                        case .success(false): fetch(locked)
                        case .success(true): fetch(unlockedItems)
                        case .failure(let error): finish(.failure(error))
                        }
                    }
                }
            }
        }
    }

    /// One Secret Service call whose answer must have `signature` (on the loop).
    private func request(_ path: ObjectPath, _ interface: String, _ member: String, _ body: [Value], _ signature: Signature,
                         completion: @escaping (Result<Message, DBusError>) -> Void) {
        connection.call(
            .methodCall(destination: Self.busName, path: path, interface: interface, member: member, body: body),
            timeout: .seconds(30)
        ) { result in
            completion(result.flatMap { reply in
                do throws(DBusError) {
                    try reply.expect(signature)
                    return .success(reply)
                } catch {
                    return .failure(error)
                }
            })
        }
    }

    /// Stores (or replaces) the password of `user` in the default keyring;
    /// `completion` (on the loop) hears the error, if any. Call it on the loop.
    public func storePassword(_ password: String, user: String, completion: @escaping (DBusError?) -> Void) {
        store(password, as: .campusPassword(user: user), completion: completion)
    }

    /// Stores (or replaces) `password` as `item` in the default keyring, on the loop.
    public func store(_ password: String, as item: KeyringItem, completion: @escaping (DBusError?) -> Void) {
        connection.loop.preconditionIsCurrent()
        request(Self.path, Self.service, "OpenSession", [.string("plain"), .variant(.string(""))], "vo") { opened in
            let session: ObjectPath
            do throws(DBusError) { session = try opened.get().argument(1) } catch { return completion(error) }
            let finish = { (error: DBusError?) in
                self.closeSession(session)
                completion(error)
            }
            self.request(Self.path, Self.service, "ReadAlias", [.string("default")], "o") { alias in
                let collection: ObjectPath
                do throws(DBusError) { collection = try alias.get().argument(0) } catch { return finish(error) }
                guard collection != .root else {
                    return finish(DBusError(.failed, "the keyring has no default collection; create one in your keyring manager"))
                }
                let properties: [String: Variant] = [
                    "org.freedesktop.Secret.Item.Label": Variant(item.label),
                    "org.freedesktop.Secret.Item.Attributes": Variant(item.attributes.dbusValue),
                ]
                let secret = Value.structure([
                    .objectPath(session), .array(element: "y", []), .array(element: "y", password.utf8.map { .byte($0) }),
                    .string("text/plain; charset=utf8"),
                ])
                self.request(collection, "org.freedesktop.Secret.Collection", "CreateItem",
                             [properties.dbusValue, secret, .boolean(true)], "oo") { created in
                    let prompt: ObjectPath
                    do throws(DBusError) { prompt = try created.get().argument(1) } catch { return finish(error) }
                    guard prompt != .root else { return finish(nil) }
                    self.prompt(prompt) { dismissed in
                        switch dismissed {
                        case .success(true): finish(DBusError(.accessDenied, "the keyring prompt was dismissed; nothing was saved"))
                        case .success(false): finish(nil)
                        case .failure(let error): finish(error)
                        }
                    }
                }
            }
        }
    }

    /// Closes a session without waiting for the answer.
    private func closeSession(_ session: ObjectPath) {
        var close = Message.methodCall(
            destination: Self.busName, path: session, interface: "org.freedesktop.Secret.Session", member: "Close")
        close.noReplyExpected = true
        let connection = self.connection
        let message = close
        connection.loop.execute { _ = try? connection.send(message) }
    }

    /// Shows a keyring prompt; `completion` (on the loop) hears whether it was dismissed.
    private func prompt(_ prompt: ObjectPath, completion: @escaping (Result<Bool, DBusError>) -> Void) {
        var token: SubscriptionToken?
        token = connection.subscribe(MatchRule(path: prompt, interface: "org.freedesktop.Secret.Prompt", member: "Completed")) {
            [connection] message in
            if let token { connection.unsubscribe(token) }
            completion(.success((try? message.argument(0, as: Bool.self)) ?? true))
        }
        connection.call(
            .methodCall(destination: Self.busName, path: prompt, interface: "org.freedesktop.Secret.Prompt", member: "Prompt",
                        body: [.string("")])
        ) { [connection] result in
            if case .failure(let error) = result {
                if let token { connection.unsubscribe(token) }
                completion(.failure(error))
            }
        }
    }
}
