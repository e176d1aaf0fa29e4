import CCRelayCore
import CoreVocabulary

/// The notifier's bookkeeping, without D-Bus (as dunst's `queues.c` is kept
/// apart from its D-Bus glue): which bubble each alert kind has on the
/// server — its slot: shown with an id, or a `Notify` under way and what is to
/// follow it —, what waits for a server (the newest alert of each kind, in
/// the order the kinds first waited), which ids are this run's (so signals
/// about other programs' bubbles are ignored), and which closes it asked for
/// (so the server's "closed" is never taken for the user's dismissal). Each
/// input returns what to send; `Notifier` sends it and reads the answers.
struct NotificationSlots {
    /// What the notifier is to send.
    enum Step: Equatable {
        /// `Notify` for the alert, replacing bubble `replacing` (0: a new one).
        case notify(Alert, replacing: UInt32)
        /// `CloseNotification` for this id.
        case close(UInt32)
    }

    private enum Slot: Equatable {
        case shown(id: UInt32)
        /// A `Notify` is under way; what to do when it answers.
        case sending(previousID: UInt32, next: Alert?, closeWhenShown: Bool)
    }

    private var slots: [AlertKind: Slot] = [:]
    /// Bubbles an earlier run showed, adopted before the first server was known.
    private var inherited: [AlertKind: UInt32] = [:]
    private var owners: [UInt32: AlertKind] = [:]
    private var activationTokens: [UInt32: String] = [:]
    private var waiting: [AlertKind: Alert] = [:]
    private var waitingOrder: [AlertKind] = []
    /// Ids this notifier asked the server to close, until their NotificationClosed.
    private var closing: Set<UInt32> = []

    /// What waits for a server, oldest first (the newest alert of each kind).
    var waitingAlerts: [Alert] { waitingOrder.compactMap { waiting[$0] } }

    /// Shows `alert` in its kind's slot on the server (when `serverKnown`),
    /// or keeps it waiting for one (then nothing is to be sent).
    mutating func post(_ alert: Alert, serverKnown: Bool) -> [Step] {
        guard serverKnown else {
            if waiting.updateValue(alert, forKey: alert.kind) == nil { waitingOrder.append(alert.kind) }
            return []
        }
        switch slots[alert.kind] {
        case .sending(let previousID, _, _):
            // The one under way is superseded: this one follows it when it answers.
            slots[alert.kind] = .sending(previousID: previousID, next: alert, closeWhenShown: false)
            return []
        case .shown(let id):
            slots[alert.kind] = .sending(previousID: id, next: nil, closeWhenShown: false)
            return [.notify(alert, replacing: id)]
        case nil:
            slots[alert.kind] = .sending(previousID: 0, next: nil, closeWhenShown: false)
            return [.notify(alert, replacing: 0)]
        }
    }

    /// Takes over bubble `id` of an earlier run for `kind`: before the first
    /// server is known it waits for it (`serverKnown` false).
    mutating func adopt(_ kind: AlertKind, shownAs id: UInt32, serverKnown: Bool) {
        guard id != 0, slots[kind] == nil, waiting[kind] == nil else { return }
        if serverKnown { take(kind, id) } else { inherited[kind] = id }
    }

    /// Closes the bubble of `kind`, if one is shown, on its way, adopted or waiting.
    mutating func close(_ kind: AlertKind) -> [Step] {
        if waiting.removeValue(forKey: kind) != nil { waitingOrder.removeAll { $0 == kind } }
        // An earlier run's bubble, closed before this run knows the server: it is that server's.
        if let id = inherited.removeValue(forKey: kind) { return [.close(id)] }
        switch slots[kind] {
        case .sending(let previousID, _, _):
            slots[kind] = .sending(previousID: previousID, next: nil, closeWhenShown: true)
            return []
        case .shown(let id):
            slots[kind] = nil
            closing.insert(id)
            return [.close(id)]
        case nil:
            return []
        }
    }

    /// The server is gone: its ids mean nothing now, and an alert that was to
    /// follow a bubble on its way waits for the next server.
    mutating func forgetServer() {
        for (kind, slot) in slots {
            if case .sending(_, let next?, false) = slot, waiting[kind] == nil {
                waiting[kind] = next
                waitingOrder.append(kind)
            }
        }
        slots = [:]
        owners = [:]
        activationTokens = [:]
        closing = []
    }

    /// The bus has said who owns the name: the first time, bubbles adopted
    /// before are that server's when there is one; later, they mean nothing.
    mutating func ownerKnown(first: Bool, present: Bool) {
        if first && present {
            for (kind, id) in inherited where waiting[kind] == nil { take(kind, id) }
        }
        inherited = [:]
    }

    /// Everything that waited, oldest first, no longer waiting (a server is there to post it to).
    mutating func takeWaiting() -> [Alert] {
        defer {
            waiting = [:]
            waitingOrder = []
        }
        return waitingAlerts
    }

    /// The `Notify` for `kind` answered `id` (nil: it failed). What the
    /// notifier reports, whether to close it at once, and what follows; nil
    /// when no `Notify` of the kind was under way (an answer to ignore).
    mutating func answered(_ kind: AlertKind, previousID: UInt32, id: UInt32?) -> (delivered: UInt32?, close: [Step], next: Alert?)? {
        guard case .sending(_, let next, let closeWhenShown)? = slots[kind] else { return nil }
        guard let id else {
            slots[kind] = nil
            return (nil, [], next)
        }
        if previousID != 0, previousID != id { owners[previousID] = nil }
        guard id != 0 else {
            // Shown without an id: nothing to replace, close or match signals against.
            slots[kind] = nil
            return (0, [], closeWhenShown ? nil : next)
        }
        take(kind, id)
        if closeWhenShown { return (id, close(kind), nil) }
        return (id, [], next)
    }

    /// NotificationClosed for `id`: the kind and why, when the bubble is this run's.
    mutating func closed(_ id: UInt32, code: UInt32) -> (AlertKind, Notifier.CloseReason)? {
        guard let kind = owners.removeValue(forKey: id) else { return nil }
        activationTokens[id] = nil
        if slots[kind] == .shown(id: id) { slots[kind] = nil }
        // Our own close, whatever the server calls it: never the user's dismissal.
        let reason = closing.remove(id) != nil ? .closedByCall : Notifier.CloseReason(rawValue: code) ?? .undefined
        return (kind, reason)
    }

    /// ActionInvoked on `id`: the kind and the activation token that came before, when the bubble is this run's.
    mutating func action(on id: UInt32) -> (AlertKind, token: String?)? {
        guard let kind = owners[id] else { return nil }
        return (kind, activationTokens.removeValue(forKey: id))
    }

    /// ActivationToken for `id`, kept for its action.
    mutating func activationToken(_ token: String, for id: UInt32) {
        if owners[id] != nil { activationTokens[id] = token }
    }

    private mutating func take(_ kind: AlertKind, _ id: UInt32) {
        slots[kind] = .shown(id: id)
        owners[id] = kind
    }
}
