import CCProtocol
import DBus
import EventLoop
import DesktopServices
import SessionLogic
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's face on the session bus — its name, the control API, the
/// LauncherEntry badge — and what it keeps in the `AlertStore`: the journal,
/// acknowledgements, the saved session. All on `loop`, like the rest.
extension Daemon: ControlTarget {
    // MARK: Bus name and objects

    /// Exports the control object and the LauncherEntry (on `loop`).
    func exportObjects() {
        bus.export([ControlAPI.interface(for: self)], at: ControlNames.path)
        bus.export([LauncherEntry.interface { [weak self] in self?.badge ?? BadgeState(count: 0, urgent: false) }],
                   at: LauncherEntry.path)
    }

    /// Takes `io.github.ccrelay.CCRelay` (on `loop`); when another daemon has
    /// it, `done` gets an error saying which process that is and how to stop it.
    /// Completion calls, not async ones: Swift concurrency (and libdispatch's
    /// global queues) would start libdispatch's worker-pool monitor, which
    /// wakes the process every second for the rest of its life.
    func claimBusName(done: @escaping (RelayError?) -> Void) {
        loop.preconditionIsCurrent()
        let connection = bus
        connection.requestName(ControlNames.busName) { reply in
            guard case .success(let code) = reply, code != .primaryOwner && code != .alreadyOwner else {
                if case .failure(let error) = reply { return done(RelayError("cannot claim \(ControlNames.busName): \(error.message)")) }
                return done(nil)
            }
            func refuse(_ who: String) {
                done(RelayError(
                    "another ccrelay daemon already runs in this session: \(who) owns \(ControlNames.busName). "
                        + "Use that one, or stop it first (systemctl --user stop ccrelay)."))
            }
            connection.nameOwner(ControlNames.busName) { owner in
                guard case .success(let owner?) = owner else { return refuse("another process") }
                connection.call(.methodCall(
                    destination: StandardNames.bus, path: StandardNames.busPath, interface: StandardNames.bus,
                    member: "GetConnectionUnixProcessID", body: [.string(owner)])
                ) { reply in
                    guard let pid = try? reply.get().argument(0, as: UInt32.self) else { return refuse(owner) }
                    refuse("process \(pid) (\(owner))")
                }
            }
        }
    }

    /// Emits `PropertiesChanged` for the named control properties.
    func announceProperties(_ names: [String]) {
        do {
            try bus.emitPropertiesChanged(path: ControlNames.path, interface: ControlNames.interface, changed: names)
        } catch {
            log("cannot announce \(names.joined(separator: ", ")): \(error.message)")
        }
    }

    // MARK: Journal and badge

    /// Records alerts before they are shown, all in one transaction; a
    /// notice's id is remembered as seen in the same transaction.
    func journal(_ alerts: [(Alert, notice: String?)]) {
        guard !alerts.isEmpty, let store else { return }
        do {
            try store.record(alerts)
            journalKeeper.succeeded()
        } catch {
            journalKeeper.failed(error, doing: "record \(alerts.count) alert(s)")
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
        do {
            try LauncherEntry.announce(current, on: bus)
        } catch {
            log("cannot announce the badge: \(error.message)")
        }
        if changed || announce { announceProperties(["Badge"]) }
    }

    /// Clicking a bubble (any action) or dismissing it acknowledges its alerts;
    /// expiry does not. `relogin` also logs in again.
    func notifierEvent(_ event: Notifier.Event) {
        switch event {
        case .delivered(let kind, let id):
            try? store?.setNotificationID(id, forNewest: kind)
        case .actionInvoked(let kind, let key, _):
            acknowledge(kind)
            if key == AlertAction.reloginKey { handle(.start) }
        case .closed(let kind, .dismissed):
            acknowledge(kind)
        default:
            break
        }
    }

    private func acknowledge(_ kind: AlertKind) {
        guard let store else { return }
        do {
            try store.acknowledge(kind: kind)
        } catch {
            journalKeeper.failed(error, doing: "acknowledge the \(kind.rawValue) alert")
        }
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
    func saveSessionIfChanged() {
        let facts = token.map { SessionFacts(token: $0, interval: session.interval, timeout: session.timeout) }
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
            lastErrorCode: lastProblem?.code ?? "",
            nextAttempt: session.nextAttempt(at: now()).map { Int64($0.components.seconds) },
            interval: UInt32(clamping: session.interval.components.seconds),
            timeout: UInt32(clamping: session.timeout.components.seconds), location: locationStatus, version: version)
    }

    func clearBadge() -> UInt32 {
        guard let store else { return 0 }
        var cleared = 0
        do {
            cleared = try store.acknowledgeAll()
        } catch {
            journalKeeper.failed(error, doing: "clear the badge")
        }
        refreshBadge()
        return UInt32(clamping: cleared)
    }

    func requestLogin() { handle(.start) }

    func requestLogout() { handle(.logout) }

    func journal(limit: Int) -> [JournalEntry] {
        (try? store?.alerts(limit: limit)) ?? []
    }
}

/// What the saved session row holds that a keep-alive does not change.
struct SessionFacts: Equatable {
    var token: String
    var interval: Duration
    var timeout: Duration
}
