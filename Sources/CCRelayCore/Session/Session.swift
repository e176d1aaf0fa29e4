import CoreVocabulary

/// The keep-alive state machine: pure and synchronous. Give it an event and
/// the current instant; it answers with effects for the shell to carry out.
/// It never touches a socket, a clock or a file, so every timing rule is
/// tested with a virtual clock.
///
/// Timing follows docs/protocol.md: `deadline` is the last accepted keep-alive (or
/// the login) plus `timeout`; a keep-alive is due every `interval`; failures
/// are retried with capped exponential back-off and jitter, always before the
/// deadline, and a request's timeout never outlives `remaining`.
public struct Session: Sendable {
    public private(set) var state: DaemonState = .offline
    /// When the server will log this session out without an accepted keep-alive.
    public var deadline: Instant? { if case .holding(let deadline, _, _) = phase { deadline } else { nil } }
    public private(set) var interval: Duration = .seconds(60)
    public private(set) var timeout: Duration = .seconds(180)
    /// What the server last granted, bounded (`interval`/`timeout` follow from them).
    private var grantedInterval = 60
    private var grantedTimeout = 180
    /// Ids of notices already shown, ever.
    public private(set) var noticesSeen: Set<String>

    private let settings: SessionSettings
    private enum Request { case login, keepAlive }
    private var inFlight: Request?
    /// When the request in flight (or the last one) was sent.
    private var sentAt: Instant?
    /// When the next request (keep-alive, or login retry) is due.
    private var nextSend: Instant?
    /// The seq of the last report sent (1, 2, 3 … per session).
    public private(set) var seq: UInt64 = 0
    /// Whether the client holds a session, and its facts.
    private var phase = Phase.noSession
    private enum Phase: Sendable {
        case noSession
        /// Logged in: the server's deadline; the seq of the report not yet
        /// accepted (retries reuse it); whether it is a previous run's
        /// session the server has not confirmed yet.
        case holding(deadline: Instant, pendingSeq: UInt64?, restoredUnconfirmed: Bool)
    }
    /// The alerts of the episodes under way (failing, logged out, credentials, untrusted), each raised once.
    private var shown: Set<AlertKind> = []
    private var failures = 0
    /// The session was lost (expiry or sleep) and is being won back.
    private var recovering = false
    /// That the session lapsed while it is won back was said (once an episode).
    private var lapseSaid = false
    /// The user logged out while a login was in flight: a session that login
    /// wins is ended at once (the user's last word wins).
    private var endGrantedSession = false
    /// The user wants to be online (from start until logout or a refusal).
    private var wanted = false
    /// When the server ended the session by itself lately (`reloginAfterServerEnd`'s fight rule).
    private var serverEnds: [Instant] = []
    private var networkUp = true
    private var sleep = Sleep.awake
    private enum Sleep: Sendable {
        case awake
        /// Between logind's PrepareForSleep and the resume; `readyToSleepOwed`:
        /// the sleep inhibitor is still held, to be released once nothing is in flight.
        case asleep(readyToSleepOwed: Bool)
    }
    private var asleep: Bool { if case .asleep = sleep { true } else { false } }
    private var random: SplitMix64

    public init(settings: SessionSettings = SessionSettings(), noticesSeen: Set<String> = []) {
        self.settings = settings
        self.noticesSeen = noticesSeen
        random = SplitMix64(seed: settings.jitterSeed)
    }

    /// Seconds until the deadline, or nil without a session.
    public func remaining(at now: Instant) -> Duration? { deadline.map { $0 - now } }

    /// Time until the next request goes out: zero while one is in flight,
    /// nil when none is planned (logged out, offline, no network, asleep).
    public func nextAttempt(at now: Instant) -> Duration? {
        if inFlight != nil { return .zero }
        guard !asleep, networkUp, let nextSend else { return nil }
        return max(nextSend - now, .zero)
    }

    /// When the next request goes out: when the one in flight went out (so
    /// that the time until it reads zero), nil when none is planned.
    public var nextAttemptDue: Instant? {
        if inFlight != nil { return sentAt }
        guard !asleep, networkUp else { return nil }
        return nextSend
    }

    /// Handles one event at `now` and returns what to do, in order.
    public mutating func handle(_ event: SessionEvent, at now: Instant) -> [SessionEffect] {
        var effects: [SessionEffect] = []
        switch event {
        case .start:
            wanted = true
            endGrantedSession = false
            // The user's own word: the ends of a fight before it no longer count.
            serverEnds = []
            if inFlight == nil && deadline == nil {
                // A user command starts a new phase: no back-off carried over.
                failures = 0
                // After a refusal the credentials were changed: a kept connection
                // (and its TLS session) would still present the refused ones.
                if shown.contains(.credentials) { effects.append(.dropConnection) }
                beginLogin(now, &effects)
            }
        case .restore(let restored):
            wanted = true
            guard inFlight == nil && deadline == nil else { break }
            guard restored.remaining > settings.minimumGap else {
                beginLogin(now, &effects)
                break
            }
            (interval, timeout) = ServerTiming.effective(interval: restored.interval, timeout: restored.timeout)
            grantedInterval = restored.interval
            grantedTimeout = restored.timeout
            phase = .holding(deadline: now + min(restored.remaining, timeout), pendingSeq: nil, restoredUnconfirmed: true)
            seq = restored.seq
            set(.online, &effects)
            sendKeepAlive(now, &effects)
        case .timerFired:
            onTimer(now, &effects)
        case .loginAnswered(let reply):
            guard inFlight == .login else { break }
            inFlight = nil
            if wanted {
                loginAnswered(reply, now, &effects)
            } else if case .loggedIn = reply, endGrantedSession {
                // Logged out while this login was under way: end what it won.
                endGrantedSession = false
                effects.append(.sendLogout)
            }
        case .keepAliveAnswered(let reply):
            guard inFlight == .keepAlive else { break }
            inFlight = nil
            if deadline != nil && wanted {
                keepAliveAnswered(reply, now, &effects)
            } else if wanted {
                // The session ended while this keep-alive was under way (a
                // logout, then a login asked for): that login goes out now.
                failures = 0
                beginLogin(now, &effects)
            }
        case .sleeping:
            prepareForSleep(now, &effects)
        case .resumed:
            resumed(now, &effects)
        case .connectivity(let online):
            connectivity(online, now, &effects)
        case .logout, .stop:
            let logout = event == .logout || settings.logoutOnExit
            if logout && deadline != nil { effects.append(.sendLogout) }
            if logout { phase = .noSession }
            // A login under way is answered later: what it wins is ended then.
            if logout && inFlight == .login { endGrantedSession = true }
            if event == .stop { inFlight = nil }
            wanted = false
            nextSend = nil
            if case .holding(let deadline, _, let unconfirmed) = phase {
                phase = .holding(deadline: deadline, pendingSeq: nil, restoredUnconfirmed: unconfirmed)
            }
            set(.offline, &effects)
            effects.append(.cancelTimer)
            return effects
        }
        if case .asleep(let owed) = sleep {
            if owed && inFlight == nil {
                sleep = .asleep(readyToSleepOwed: false)
                effects.append(.readyToSleep)
            }
            effects.append(.cancelTimer)
        } else {
            armNext(now, &effects)
        }
        return effects
    }

    // MARK: Login

    private mutating func beginLogin(_ now: Instant, _ effects: inout [SessionEffect]) {
        guard networkUp, !asleep, inFlight == nil else { return }
        inFlight = .login
        sentAt = now
        nextSend = nil
        set(.loggingIn, &effects)
        // A login that hangs must not hold up the next try for longer than an
        // interval (a server that has just healed answers the next one).
        effects.append(.sendLogin(timeout: min(settings.requestTimeout, max(interval, settings.minimumRequestTimeout))))
    }

    private mutating func loginAnswered(_ reply: LoginAnswer, _ now: Instant, _ effects: inout [SessionEffect]) {
        switch reply {
        case .loggedIn(let newInterval, let newTimeout, let notices):
            grantedInterval = newInterval
            grantedTimeout = newTimeout
            (interval, timeout) = ServerTiming.effective(interval: newInterval, timeout: newTimeout)
            phase = .holding(deadline: now + timeout, pendingSeq: nil, restoredUnconfirmed: false)
            seq = 0
            nextSend = now + interval
            recovered(&effects)
            trusted(&effects)
            if shown.contains(.credentials) {
                shown.remove(.credentials)
                effects.append(.close(.credentials))
            }
            set(.online, &effects)
            show(notices, &effects)
        case .refused(let problem, let message):
            wanted = false
            nextSend = nil
            if recovering && !shown.contains(.loggedOut) {
                shown.insert(.loggedOut)
                effects.append(.post(.loggedOut(message: nil)))
            }
            shown.insert(.credentials)
            effects.append(.post(.credentials(problem, said: message)))
            set(.loggedOut, &effects)
        case .blocked(let problem, let message, let retryAfter):
            failures += 1
            nextSend = now + .seconds(ServerTiming.clamp(retryAfter, ServerTiming.intervals))
            if !shown.contains(.credentials) {
                shown.insert(.credentials)
                effects.append(.post(.credentials(problem, said: message)))
            }
            set(.loggedOut, &effects)
        case .noNetwork:
            failures += 1
            nextSend = retry(now, cap: loginBackoffCap)
            set(.noNetwork, &effects)
        case .rateLimited(let retryAfter):
            failures += 1
            nextSend = now + max(backoff(cap: loginBackoffCap), ServerTiming.retryAfter(retryAfter))
            set(.loggingIn, &effects)
        case .untrusted(let problem):
            failures += 1
            nextSend = now + settings.backoffCap
            distrusted(problem, &effects)
            set(.loggingIn, &effects)
        case .transientFailure:
            failures += 1
            nextSend = retry(now, cap: loginBackoffCap)
            if recovering && !shown.contains(.loggedOut) && !lapseSaid {
                // The session ran out during an outage and ccrelay wins it back by itself: not "log in
                // again" (the user has nothing to do), said once in the keep-alive bubble; back online closes it.
                lapseSaid = true
                shown.insert(.keepAliveFailing)
                effects.append(.post(.sessionLapsed))
            }
            set(.loggingIn, &effects)
        }
    }

    // MARK: Keep-alive

    private mutating func sendKeepAlive(_ now: Instant, _ effects: inout [SessionEffect]) {
        guard case .holding(let deadline, let pending, let unconfirmed) = phase, networkUp, !asleep, inFlight == nil else { return }
        // Found by fuzzing: a keep-alive due after the deadline (before a
        // sleep, say) would go out with no time left. The session is lost.
        guard deadline > now else { return lost(now, &effects) }
        let reportSeq: UInt64
        if let pending {
            reportSeq = pending
        } else {
            seq += 1
            reportSeq = seq
            phase = .holding(deadline: deadline, pendingSeq: reportSeq, restoredUnconfirmed: unconfirmed)
        }
        inFlight = .keepAlive
        sentAt = now
        nextSend = nil
        // Half the remaining time at most: a hung request still leaves room
        // for a retry; and an interval at most, like a login.
        let remaining = deadline - now
        let limit = min(
            settings.requestTimeout, max(interval, settings.minimumRequestTimeout),
            max(remaining / 2, min(remaining, .seconds(1))))
        effects.append(.sendKeepAlive(seq: reportSeq, timeout: limit))
    }

    private mutating func keepAliveAnswered(_ reply: KeepAliveAnswer, _ now: Instant, _ effects: inout [SessionEffect]) {
        switch reply {
        case .accepted(let newInterval, let newTimeout, let notices):
            grantedInterval = newInterval ?? grantedInterval
            grantedTimeout = newTimeout ?? grantedTimeout
            (interval, timeout) = ServerTiming.effective(interval: grantedInterval, timeout: grantedTimeout)
            phase = .holding(deadline: now + timeout, pendingSeq: nil, restoredUnconfirmed: false)
            nextSend = now + interval
            recovered(&effects)
            trusted(&effects)
            set(.online, &effects)
            show(notices, &effects)
        case .loggedOut(let reason, let message):
            let unconfirmed = if case .holding(_, _, true) = phase { true } else { false }
            phase = .noSession
            if reason == .expired && wanted && unconfirmed {
                // The previous run's session ran out while no daemon was there: log in quietly.
                beginLogin(now, &effects)
            } else if reason == .expired && settings.autoRelogin && wanted {
                recovering = true
                beginLogin(now, &effects)
            } else if let pause = settings.reloginAfterServerEnd, settings.autoRelogin, wanted, reason != .requested {
                serverEnded(after: pause, message: message, now, &effects)
            } else {
                wanted = false
                nextSend = nil
                shown.insert(.loggedOut)
                effects.append(.post(.loggedOut(message: message)))
                set(.loggedOut, &effects)
            }
        case .refused(let problem, let message):
            phase = .noSession
            wanted = false
            nextSend = nil
            shown.insert(.credentials)
            effects.append(.post(.credentials(problem, said: message)))
            set(.loggedOut, &effects)
        case .rateLimited(let retryAfter):
            failed(now, atLeast: ServerTiming.retryAfter(retryAfter), &effects)
        case .untrusted(let problem):
            distrusted(problem, &effects)
            failed(now, atLeast: settings.backoffCap, &effects)
        case .transientFailure, .noNetwork:
            failed(now, atLeast: .zero, &effects)
        }
    }

    /// The server ended the session by itself (a Srun portal): the user hears
    /// of it, and the session is won back after `pause` — unless this is the
    /// `fightLimit`th end within `fightWindow`: then another device (or the
    /// portal) keeps ending it, and fighting on would only feed the fight.
    private mutating func serverEnded(after pause: Duration, message: String?, _ now: Instant, _ effects: inout [SessionEffect]) {
        serverEnds = serverEnds.filter { now - $0 < settings.fightWindow } + [now]
        nextSend = nil
        shown.insert(.loggedOut)
        if serverEnds.count >= settings.fightLimit {
            wanted = false
            let minutes = Int(settings.fightWindow.components.seconds / 60)
            effects.append(.post(.sessionFought(times: serverEnds.count, minutes: minutes)))
        } else {
            // A login that works closes the logout bubble with back-online (`recovered`).
            recovering = true
            failures = 0
            nextSend = now + pause
            effects.append(.post(.loggedOut(message: message)))
        }
        set(.loggedOut, &effects)
    }

    private mutating func failed(_ now: Instant, atLeast floor: Duration, _ effects: inout [SessionEffect]) {
        guard let deadline else { return }
        failures += 1
        set(.failing, &effects)
        // Land before the deadline: leave room for the request itself.
        let margin = min(settings.requestTimeout, timeout / 4)
        var next = min(max(retry(now, cap: min(settings.backoffCap, interval)), now + floor), deadline - margin)
        next = max(next, now + settings.minimumGap)
        nextSend = next
        warnIfNeeded(now, &effects)
    }

    /// After an accepted keep-alive or a login: close the failure alert.
    private mutating func recovered(_ effects: inout [SessionEffect]) {
        // Back online is said (and forwarded) where the trouble was: a silent recovery (a resume) says nothing.
        if shown.contains(.keepAliveFailing) || shown.contains(.loggedOut) {
            effects.append(.post(.backOnline))
            if shown.contains(.keepAliveFailing) { effects.append(.close(.keepAliveFailing)) }
            if shown.contains(.loggedOut) { effects.append(.close(.loggedOut)) }
        }
        failures = 0
        shown.remove(.keepAliveFailing)
        recovering = false
        lapseSaid = false
        shown.remove(.loggedOut)
    }

    /// The server could not be verified: say so once per episode.
    private mutating func distrusted(_ problem: ServerTrustProblem, _ effects: inout [SessionEffect]) {
        guard !shown.contains(.serverUntrusted) else { return }
        shown.insert(.serverUntrusted)
        effects.append(.post(.serverUntrusted(problem)))
    }

    /// A verified answer: the untrusted episode is over.
    private mutating func trusted(_ effects: inout [SessionEffect]) {
        guard shown.contains(.serverUntrusted) else { return }
        shown.remove(.serverUntrusted)
        effects.append(.close(.serverUntrusted))
    }

    /// While a lost session is being won back, a login is retried at least
    /// once an interval; otherwise the back-off goes up to its cap.
    private var loginBackoffCap: Duration { recovering ? min(settings.backoffCap, interval) : settings.backoffCap }

    private mutating func warnIfNeeded(_ now: Instant, _ effects: inout [SessionEffect]) {
        guard !shown.contains(.keepAliveFailing), failures > 0, let deadline, deadline - now < settings.warnBefore else { return }
        shown.insert(.keepAliveFailing)
        let seconds = Int((deadline - now).components.seconds)
        effects.append(.post(.keepAliveFailing(remainingSeconds: seconds)))
    }

    // MARK: Timer

    private mutating func onTimer(_ now: Instant, _ effects: inout [SessionEffect]) {
        guard !asleep, networkUp else { return }
        if let deadline, now >= deadline, inFlight != .keepAlive {
            lost(now, &effects)
            return
        }
        warnIfNeeded(now, &effects)
        guard inFlight == nil, let due = nextSend, due <= now else { return }
        if deadline == nil {
            if wanted { beginLogin(now, &effects) }
        } else {
            sendKeepAlive(now, &effects)
        }
    }

    /// The deadline passed without an accepted keep-alive: the server has
    /// logged the session out.
    private mutating func lost(_ now: Instant, _ effects: inout [SessionEffect]) {
        phase = .noSession
        nextSend = nil
        recovering = true
        // Winning the session back is a new phase: the keep-alive failures
        // that lost it do not slow the logins down.
        failures = 0
        if settings.autoRelogin && wanted {
            beginLogin(now, &effects)
        } else {
            wanted = false
            shown.insert(.loggedOut)
            effects.append(.post(.loggedOut(message: nil)))
            set(.loggedOut, &effects)
        }
    }

    private mutating func armNext(_ now: Instant, _ effects: inout [SessionEffect]) {
        guard networkUp else {
            effects.append(.cancelTimer)
            return
        }
        var earliest: Instant?
        var earliestFuture: Instant?
        func consider(_ instant: Instant) {
            earliest = min(earliest ?? instant, instant)
            if instant > now { earliestFuture = min(earliestFuture ?? instant, instant) }
        }
        if inFlight == nil, let nextSend { consider(nextSend) }
        if let deadline {
            consider(deadline)
            if !shown.contains(.keepAliveFailing) && failures > 0 { consider(deadline - settings.warnBefore) }
        }
        // A past instant fires at once, but only when nothing is in flight:
        // while a request is out its answer is what comes next (a timer at
        // `now` would fire again and again until it came).
        if let next = earliestFuture ?? (inFlight == nil ? earliest : nil) {
            effects.append(.armTimer(at: max(next, now)))
        } else {
            effects.append(.cancelTimer)
        }
    }

    // MARK: Sleep and network

    private mutating func prepareForSleep(_ now: Instant, _ effects: inout [SessionEffect]) {
        sleep = .awake
        // A keep-alive due within half an interval goes out before sleeping.
        if inFlight == nil, deadline != nil, let due = nextSend, due - now < interval / 2 {
            sendKeepAlive(now, &effects)
        }
        sleep = .asleep(readyToSleepOwed: true)
        set(.sleeping, &effects)
    }

    private mutating func resumed(_ now: Instant, _ effects: inout [SessionEffect]) {
        guard asleep else { return }
        sleep = .awake
        failures = 0
        effects.append(.dropConnection)
        resumeSession(now, &effects)
    }

    private mutating func connectivity(_ online: Bool, _ now: Instant, _ effects: inout [SessionEffect]) {
        if !online {
            networkUp = false
            if !asleep { set(.noNetwork, &effects) }
            return
        }
        networkUp = true
        failures = 0
        effects.append(.dropConnection)
        if !asleep { resumeSession(now, &effects) }
    }

    /// After sleep or a network change: keep-alive at once, or win the session back.
    private mutating func resumeSession(_ now: Instant, _ effects: inout [SessionEffect]) {
        guard inFlight == nil else { return }
        if let deadline {
            if now >= deadline {
                lost(now, &effects)
            } else {
                set(failures > 0 ? .failing : .online, &effects)
                sendKeepAlive(now, &effects)
            }
        } else if wanted {
            beginLogin(now, &effects)
        } else {
            set(state == .sleeping || state == .noNetwork ? .offline : state, &effects)
        }
    }

    // MARK: Helpers

    /// Changes the state; while asleep the session stays `sleeping` until resumed.
    private mutating func set(_ newState: DaemonState, _ effects: inout [SessionEffect]) {
        guard newState != state, !asleep || newState == .sleeping else { return }
        state = newState
        effects.append(.stateChanged(newState))
    }

    private mutating func show(_ notices: [NoticeInfo], _ effects: inout [SessionEffect]) {
        guard settings.notices else { return }
        for notice in notices where !noticesSeen.contains(notice.id) {
            noticesSeen.insert(notice.id)
            effects.append(.post(.notice(id: notice.id, title: notice.title, body: notice.body, urgency: notice.urgency)))
        }
    }

    /// When a failed request is tried again: the back-off counts from when
    /// the failed one was sent, so the time a request spent timing out is
    /// not waited a second time (a server that has just healed is reached
    /// as soon as the hung request gives up). Never sooner than `minimumGap`.
    private mutating func retry(_ now: Instant, cap: Duration) -> Instant {
        let step = backoff(cap: cap)
        return max((sentAt ?? now) + step, now + settings.minimumGap)
    }

    /// Capped exponential back-off with jitter in [0.5, 1] of the step.
    private mutating func backoff(cap: Duration) -> Duration {
        let exponent = min(max(failures - 1, 0), 20)
        let step = min(settings.backoffBase * (1 << exponent), cap)
        let fraction = 0.5 + 0.5 * random.nextUnit()
        return max(step * fraction, settings.minimumGap)
    }
}

/// A small, seedable generator for the jitter (SplitMix64).
struct SplitMix64: Sendable {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// A value in [0, 1).
    mutating func nextUnit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
