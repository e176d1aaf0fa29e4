import DBus

/// The campus password in the desktop keyring, through the freedesktop
/// Secret Service (`org.freedesktop.secrets`: GNOME Keyring, KWallet, KeePassXC).
///
/// Items carry the attributes `application=ccrelay` and `user=<user>`. The
/// secret travels in a `plain` session: on the local bus, as the
/// specification allows; the password is never written to a file or argv.
public struct SecretService: Sendable {
    public static let busName = "org.freedesktop.secrets"
    static let path: ObjectPath = "/org/freedesktop/secrets"
    static let service = "org.freedesktop.Secret.Service"

    private let connection: Connection

    public init(connection: Connection) { self.connection = connection }

    /// The stored password of `user`, or nil when the keyring has none.
    public func password(user: String) async throws(DBusError) -> String? {
        let session = try await openSession()
        defer { closeSession(session) }
        let search = try await call(Self.path, Self.service, "SearchItems", [attributes(user).dbusValue])
        try search.expect("aoao")
        var items: [ObjectPath] = try search.argument(0)
        let locked: [ObjectPath] = try search.argument(1)
        if items.isEmpty && !locked.isEmpty {
            let unlock = try await call(Self.path, Self.service, "Unlock", [locked.dbusValue])
            try unlock.expect("aoo")
            items = try unlock.argument(0)
            let prompt: ObjectPath = try unlock.argument(1)
            if prompt != .root, try await runPrompt(prompt) { items = locked }
        }
        guard let item = items.first else { return nil }
        let reply = try await call(Self.path, Self.service, "GetSecrets", [[item].dbusValue, .objectPath(session)])
        try reply.expect("a{o(oayays)}")
        guard case .dictionary(_, _, let entries) = reply.body[0], case .structure(let fields)? = entries.first?.value,
            fields.count == 4, case .array(_, let bytes) = fields[2]
        else { return nil }
        return String(decoding: bytes.compactMap { if case .byte(let b) = $0 { b } else { nil } }, as: UTF8.self)
    }

    /// Stores (or replaces) the password of `user` in the default keyring.
    public func storePassword(_ password: String, user: String) async throws(DBusError) {
        let session = try await openSession()
        defer { closeSession(session) }
        let alias = try await call(Self.path, Self.service, "ReadAlias", [.string("default")])
        try alias.expect("o")
        let collection: ObjectPath = try alias.argument(0)
        guard collection != .root else {
            throw DBusError(.failed, "the keyring has no default collection; create one in your keyring manager")
        }
        let properties: [String: Variant] = [
            "org.freedesktop.Secret.Item.Label": Variant("CC Relay campus password for \(user)"),
            "org.freedesktop.Secret.Item.Attributes": Variant(attributes(user).dbusValue),
        ]
        let secret = Value.structure([
            .objectPath(session), .array(element: "y", []), .array(element: "y", password.utf8.map { .byte($0) }),
            .string("text/plain; charset=utf8"),
        ])
        let reply = try await call(
            collection, "org.freedesktop.Secret.Collection", "CreateItem", [properties.dbusValue, secret, .boolean(true)])
        try reply.expect("oo")
        let prompt: ObjectPath = try reply.argument(1)
        if prompt != .root, try await runPrompt(prompt) == false {
            throw DBusError(.accessDenied, "the keyring prompt was dismissed; nothing was saved")
        }
    }

    private func attributes(_ user: String) -> [String: String] { ["application": "ccrelay", "user": user] }

    private func call(_ path: ObjectPath, _ interface: String, _ member: String, _ body: [Value]) async throws(DBusError)
        -> Message
    {
        try await connection.call(
            .methodCall(destination: Self.busName, path: path, interface: interface, member: member, body: body),
            timeout: .seconds(30))
    }

    private func openSession() async throws(DBusError) -> ObjectPath {
        let reply = try await call(Self.path, Self.service, "OpenSession", [.string("plain"), .variant(.string(""))])
        try reply.expect("vo")
        return try reply.argument(1)
    }

    /// Closes a session without waiting for the answer.
    private func closeSession(_ session: ObjectPath) {
        var close = Message.methodCall(
            destination: Self.busName, path: session, interface: "org.freedesktop.Secret.Session", member: "Close")
        close.noReplyExpected = true
        let connection = self.connection
        let message = close
        connection.queue.async { _ = try? connection.send(message) }
    }

    /// Shows a keyring prompt (to unlock, or to confirm) and waits for it; true
    /// when the user completed it, false when dismissed.
    private func runPrompt(_ prompt: ObjectPath) async throws(DBusError) -> Bool {
        let connection = self.connection
        let dismissed: Result<Bool, DBusError> = await withCheckedContinuation { continuation in
            connection.queue.async {
                var token: SubscriptionToken?
                token = connection.subscribe(
                    MatchRule(path: prompt, interface: "org.freedesktop.Secret.Prompt", member: "Completed")
                ) { message in
                    if let token { connection.unsubscribe(token) }
                    continuation.resume(returning: .success((try? message.argument(0, as: Bool.self)) ?? true))
                }
                connection.call(
                    .methodCall(destination: Self.busName, path: prompt, interface: "org.freedesktop.Secret.Prompt",
                                member: "Prompt", body: [.string("")])
                ) { result in
                    if case .failure(let error) = result {
                        if let token { connection.unsubscribe(token) }
                        continuation.resume(returning: .failure(error))
                    }
                }
            }
        }
        return try !dismissed.get()
    }
}
