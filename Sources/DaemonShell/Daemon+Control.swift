import AlertJournal
import CCProtocol
import DBus
import EventLoop
import DesktopServices
import CCRelayCore
#if canImport(Glibc)
import Glibc
#endif

/// What the control API asks of the daemon, the badge it announces through
/// its desktop face, and what it keeps in the `AlertStore`: the journal,
/// acknowledgements, the saved session. All on `loop`, like the rest.
extension Daemon: ControlTarget {
    /// Emits `PropertiesChanged` for the named control properties.
    func announceProperties(_ properties: [ControlProperty]) { desktop.announce(properties) }

    // MARK: Journal and badge

    /// Records alerts before they are shown, all in one transaction; a
    /// notice's id is remembered as seen, and an alert to forward queued in
    /// the outbox, in the same transaction.
    /// What could not be journaled (a full disk) is kept in memory and
    /// journaled — and so forwarded — first, the next time the store can be written.
    func journal(_ alerts: [(Alert, notice: String?)]) {
        guard !alerts.isEmpty || journalKeeper.hasUnjournaled else { return }
        if journalKeeper.record(alerts, forwardTo: { [forwarder] in forwarder?.destinations(for: $0) ?? [] }) {
            forwarder?.kick()
        }
        refreshBadge()
    }

    /// Re-reads the badge; announces it when it changed (or when asked, at start).
    func refreshBadge(announce: Bool = false) {
        guard let store else { return }
        let current: BadgeState
        do {
            current = try store.badge()
        } catch {
            return journalKeeper.failed(error, doing: "read the badge")
        }
        guard current != badge || announce else { return }
        let changed = current.count != badge.count
        badge = current
        desktop.announceBadge(current)
        if changed || announce { announceProperties([.badge]) }
    }

    /// Clicking a bubble (any action) or dismissing it acknowledges its alerts;
    /// expiry does not. `relogin` also logs in again.
    func notifierEvent(_ event: Notifier.Event) {
        switch event {
        case .delivered(let kind, let id):
            if id != 0 { try? store?.setNotificationID(id, forNewest: kind) }
        case .actionInvoked(let kind, let key, _):
            if kind != .status { acknowledge(kind) }
            switch key {
            case AlertAction.reloginKey, AlertAction.loginKey: handle(.start)
            case AlertAction.logoutKey: handle(.logout)
            case AlertAction.clearBadgeKey: _ = try? clearBadge()
            case AlertAction.defaultKey where kind != .status: showStatus()
            default: break
            }
        case .closed(let kind, .dismissed):
            acknowledge(kind)
        default:
            break
        }
    }

    private func acknowledge(_ kind: AlertKind) {
        acknowledging("the \(kind.rawValue) alert") { store throws(StoreError) in try store.acknowledge(kind: kind) }
    }

    /// An acknowledgement: the bubbles of kinds with nothing unread close, and the new badge is announced.
    private func acknowledging(_ what: String, _ change: (AlertStore) throws(StoreError) -> Void) {
        for kind in journalKeeper.acknowledging(what, change) { desktop.close(kind) }
        refreshBadge()
    }

    // MARK: Saved session

    /// Which credentials a saved session belongs to.
    private var account: String { configuration.user ?? configuration.certificate ?? "" }

    /// Saves the live session (or forgets it when there is none), so that a
    /// restart carries on with it.
    /// Writes the session row when what it holds changed (a login, a logout,
    /// a new interval or timeout) — not after every keep-alive, each of which
    /// would append a page to the journal's write-ahead log.
    /// A session the server ended (a kick) is a change too: its row goes,
    /// so that a restart after `kill -9` does not carry on with a dead token.
    func saveSessionIfChanged() {
        let live = session.remaining(at: now()) != nil
        let facts = live ? token.map { SessionFacts(token: $0, interval: session.interval, timeout: session.timeout) } : nil
        guard facts != savedFacts else { return }
        saveSession()
    }

    /// Writes the session row as it is now (also when stopping or restarting,
    /// so that the next run carries on with the latest deadline and seq).
    func saveSession() {
        guard let store else { return }
        var snapshot: SessionSnapshot?
        if let token, let remaining = session.remaining(at: now()), remaining > .zero {
            snapshot = SessionSnapshot(
                server: configuration.serverURL, account: account, token: token, ip: ip,
                interval: Int(session.interval.components.seconds), timeout: Int(session.timeout.components.seconds),
                seq: session.seq, deadline: AlertStore.now + Double(remaining.components.seconds)
                    + Double(remaining.components.attoseconds) / 1e18)
        }
        do {
            try store.saveSession(snapshot)
            savedFacts = snapshot.map { SessionFacts(token: $0.token, interval: session.interval, timeout: session.timeout) }
        } catch {
            journalKeeper.failed(error, doing: "save the session")
        }
    }

    /// The previous run's session, when it is for this server and account and
    /// its deadline has not passed.
    func restoredSession() -> RestoredSession? {
        guard let store else { return nil }
        let saved: SessionSnapshot?
        do {
            saved = try store.savedSession()
        } catch {
            journalKeeper.failed(error, doing: "read the saved session")
            return nil
        }
        guard let saved, saved.server == configuration.serverURL, saved.account == account else { return nil }
        let now = AlertStore.now
        if let problem = saved.problem(now: now) {
            // Damaged or tampered with: dropped; a fresh login follows quietly.
            log("the saved session cannot be used (\(problem)); logging in afresh")
            try? store.saveSession(nil)
            return nil
        }
        let remaining = saved.deadline - now
        guard remaining > 1 else { return nil }
        token = saved.token
        ip = saved.ip
        log("carrying on with the session of the previous run (\(Int(remaining)) s left)")
        return RestoredSession(
            interval: saved.interval, timeout: saved.timeout, remaining: .milliseconds(Int(remaining * 1000)), seq: saved.seq)
    }

    // MARK: ControlTarget

    func status() -> DaemonStatus {
        let remaining = session.remaining(at: now()).map { max(0, $0.components.seconds) }
        return DaemonStatus(
            state: session.state.rawValue, badge: UInt32(clamping: badge.count), urgent: badge.urgent, remaining: remaining,
            ip: ip, server: configuration.serverURL, lastError: lastProblem?.sentence ?? "",
            lastErrorCode: lastProblem?.code.rawValue ?? "",
            nextAttempt: session.nextAttempt(at: now()).map { Int64($0.components.seconds) },
            interval: UInt32(clamping: session.interval.components.seconds),
            timeout: UInt32(clamping: session.timeout.components.seconds), location: locationStatus, version: version,
            relays: forwarder?.summaries() ?? [])
    }

    func clearBadge() throws(DBusError) -> UInt32 {
        let cleared = try journalKeeper.acknowledgeAll()
        // Everything is read: no bubble of it stays on screen or waits to be shown.
        for kind in JournalKeeper.badgeKinds { desktop.close(kind) }
        refreshBadge()
        return UInt32(clamping: cleared)
    }

    /// The user's own command starts afresh: the problem of an earlier episode (a kick) is no longer shown.
    func requestLogin() {
        lastProblem = nil
        handle(.start)
    }

    func showStatus(setupCommand: Bool) {
        let status = self.status()
        var summary = StatusSummary(
            state: DaemonState(wireName: status.state), ip: status.ip, remaining: status.remaining, unread: Int(status.badge),
            problem: status.lastError)
        summary.setupCommand = setupCommand
        desktop.post(AlertCatalogue.alert(for: .status(summary), localize: Localization.localizer))
    }

    func requestLogout() {
        lastProblem = nil
        handle(.logout)
    }

    func acknowledge(alert id: Int64) {
        acknowledging("alert \(id)") { store throws(StoreError) in try store.acknowledge(id: id) }
    }

    func quit() {
        log("quit from the tray")
        stop { [process] in process.exit(0) }
    }

    func journal(limit: Int) throws(DBusError) -> [JournalEntry] { try journalKeeper.alerts(limit: limit) }
}

/// What the saved session row holds that a keep-alive does not change.
struct SessionFacts: Equatable {
    var token: String
    var interval: Duration
    var timeout: Duration
}
