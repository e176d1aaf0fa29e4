import CDBus
import EventLoop
#if canImport(Glibc)
import Glibc
#endif

/// Which signals a subscription wants: the fields of a D-Bus match rule.
///
/// The bus uses the rule to route signals to this connection; the connection
/// uses it again to pick the handlers. A well-known `sender` is resolved to its
/// current owner, the way the bus itself resolves it.
public struct MatchRule: Hashable, Sendable {
    public var sender: String?
    public var path: ObjectPath?
    public var interface: String?
    public var member: String?
    /// The first argument, when it is a string.
    public var arg0: String?

    public init(
        sender: String? = nil, path: ObjectPath? = nil, interface: String? = nil, member: String? = nil,
        arg0: String? = nil
    ) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        self.arg0 = arg0
    }

    /// The rule in the bus's syntax, values quoted as the specification says.
    public var text: String {
        var parts = ["type='signal'"]
        func add(_ key: String, _ value: String?) {
            guard let value else { return }
            // Inside quotes only the apostrophe needs care: close, escape, reopen.
            parts.append("\(key)='" + value.replacing("'", with: "'\\''") + "'")
        }
        add("sender", sender)
        add("path", path?.rawValue)
        add("interface", interface)
        add("member", member)
        add("arg0", arg0)
        return parts.joined(separator: ",")
    }

    func matchesHeaders(of raw: OpaquePointer, senderMatches: Bool) -> Bool {
        func same(_ wanted: String?, _ actual: UnsafePointer<CChar>?) -> Bool {
            guard let wanted else { return true }
            guard let actual else { return false }
            return wanted.withCString { strcmp($0, actual) == 0 }
        }
        return senderMatches && same(path?.rawValue, dbus_message_get_path(raw))
            && same(interface, dbus_message_get_interface(raw)) && same(member, dbus_message_get_member(raw))
    }
}

/// Identifies a signal subscription or name watch, to cancel it.
public struct SubscriptionToken: Hashable, Sendable {
    let id: UInt64
}

struct SignalSubscription {
    let rule: MatchRule
    let handler: (Message) -> Void
}

/// What the connection knows about the owner of a watched well-known name.
struct NameOwnerEntry {
    var owner: String?
    var resolved = false
    var watchers: [UInt64: (String?) -> Void] = [:]
    var ownerChangedToken: SubscriptionToken?
    var senderFilterUsers = 0
}


extension Connection {
    /// Subscribes to signals matching `rule` (on `loop`). The handler runs on
    /// `loop` for every matching signal until `unsubscribe`.
    public func subscribe(_ rule: MatchRule, handler: @escaping (Message) -> Void) -> SubscriptionToken {
        loop.preconditionIsCurrent("a D-Bus connection")
        let token = SubscriptionToken(id: nextToken())
        subscriptions[token.id] = SignalSubscription(rule: rule, handler: handler)
        addMatch(rule.text)
        if let sender = rule.sender, Connection.needsOwnerTracking(sender) {
            nameOwners[sender, default: NameOwnerEntry()].senderFilterUsers += 1
            startTrackingOwner(of: sender)
        }
        return token
    }

    /// Ends a subscription or a name watch (on `loop`).
    public func unsubscribe(_ token: SubscriptionToken) {
        loop.preconditionIsCurrent("a D-Bus connection")
        if let subscription = subscriptions.removeValue(forKey: token.id) {
            removeMatch(subscription.rule.text)
            if let sender = subscription.rule.sender, Connection.needsOwnerTracking(sender) {
                nameOwners[sender]?.senderFilterUsers -= 1
                stopTrackingOwnerIfUnused(sender)
            }
        } else if let name = nameWatchers.removeValue(forKey: token.id) {
            nameOwners[name]?.watchers[token.id] = nil
            stopTrackingOwnerIfUnused(name)
        }
    }

    /// Watches who owns the well-known `name` (on `loop`). The handler runs
    /// once with the current owner (nil when none) and again on every change.
    public func watchName(_ name: String, handler: @escaping (_ owner: String?) -> Void) -> SubscriptionToken {
        loop.preconditionIsCurrent("a D-Bus connection")
        let token = SubscriptionToken(id: nextToken())
        nameWatchers[token.id] = name
        nameOwners[name, default: NameOwnerEntry()].watchers[token.id] = handler
        if let entry = nameOwners[name], entry.resolved {
            loop.execute { [weak self] in
                guard let self, let entry = self.nameOwners[name], let watcher = entry.watchers[token.id] else { return }
                watcher(entry.owner)
            }
        }
        startTrackingOwner(of: name)
        return token
    }

    /// Emits a signal (on `loop`).
    public func emit(path: ObjectPath, interface: String, member: String, body: [Value] = []) throws(DBusError) {
        try send(.signal(path: path, interface: interface, member: member, body: body))
    }

    static func needsOwnerTracking(_ sender: String) -> Bool {
        !sender.hasPrefix(":") && sender != busName
    }

    private func addMatch(_ text: String) {
        matchRuleUsers[text, default: 0] += 1
        // With a NULL error libdbus sends AddMatch without waiting for the reply.
        if matchRuleUsers[text] == 1, isConnected { dbus_bus_add_match(raw, text, nil) }
    }

    private func removeMatch(_ text: String) {
        matchRuleUsers[text, default: 1] -= 1
        if matchRuleUsers[text] == 0 {
            matchRuleUsers[text] = nil
            if isConnected { dbus_bus_remove_match(raw, text, nil) }
        }
    }

    private func startTrackingOwner(of name: String) {
        guard nameOwners[name]?.ownerChangedToken == nil else { return }
        let rule = MatchRule(
            sender: Connection.busName, path: Connection.busPath, interface: Connection.busName,
            member: "NameOwnerChanged", arg0: name)
        nameOwners[name]?.ownerChangedToken = subscribe(rule) { [weak self] message in
            guard message.signature == "sss", case .string(let newOwner) = message.body[2] else { return }
            self?.setOwner(of: name, to: newOwner.isEmpty ? nil : newOwner)
        }
        call(
            .methodCall(
                destination: Connection.busName, path: Connection.busPath, interface: Connection.busName,
                member: "GetNameOwner", body: [.string(name)])
        ) { [weak self] result in
            guard let self, self.nameOwners[name]?.resolved == false else { return }
            let owner = try? result.get().argument(0, as: String.self)
            self.setOwner(of: name, to: owner)
        }
    }

    private func stopTrackingOwnerIfUnused(_ name: String) {
        guard let entry = nameOwners[name], entry.watchers.isEmpty, entry.senderFilterUsers <= 0 else { return }
        nameOwners[name] = nil
        if let token = entry.ownerChangedToken { unsubscribe(token) }
    }

    private func setOwner(of name: String, to owner: String?) {
        guard var entry = nameOwners[name] else { return }
        let changed = !entry.resolved || entry.owner != owner
        entry.owner = owner
        entry.resolved = true
        nameOwners[name] = entry
        guard changed else { return }
        for (_, watcher) in entry.watchers.sorted(by: { $0.key < $1.key }) { watcher(owner) }
    }

    func deliverSignal(_ raw: OpaquePointer) {
        let sender = dbus_message_get_sender(raw).map { String(cString: $0) }
        var decoded: Message?
        for id in subscriptions.keys.sorted() {
            guard let subscription = subscriptions[id] else { continue }
            let rule = subscription.rule
            let senderMatches: Bool
            if let wanted = rule.sender {
                senderMatches =
                    Connection.needsOwnerTracking(wanted) ? nameOwners[wanted]?.owner == sender : wanted == sender
            } else {
                senderMatches = true
            }
            guard rule.matchesHeaders(of: raw, senderMatches: senderMatches) else { continue }
            let message = decoded ?? Message(reading: raw)
            decoded = message
            if let arg0 = rule.arg0 {
                guard case .string(let first)? = message.body.first, first == arg0 else { continue }
            }
            subscription.handler(message)
        }
    }
}
