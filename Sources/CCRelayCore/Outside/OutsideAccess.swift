import CoreVocabulary

/// Whether traffic gets out, for one address family — apart from what the
/// CC server says of the session (`online` is its word that access is granted).
public enum OutsideVerdict: String, Sendable, Hashable, CaseIterable {
    /// An endpoint answered an empty 204: traffic gets out.
    case ok
    /// An endpoint answered with a page or a redirect: a captive portal stands in the way.
    case portal
    /// No endpoint answered as it should (the failures say how).
    case limited
    /// Not checked (yet, or not while the session is not online).
    case unknown
    /// `[probe] mode = off`.
    case off
}

/// What one probe endpoint answered, classified.
public enum ProbeAnswer: Sendable, Hashable {
    /// An empty 204.
    case ok
    /// A redirect, or a page where an empty 204 belongs: `what` says which.
    case portal(String)
    /// The kind of failure: `dns`, `timeout`, `connect`, `tls`, `reset`, `status N`, `transport`.
    case failed(String)

    /// The verdict for an HTTP answer that came: only an empty 204 is `ok`.
    public static func classify(status: Int, bodyBytes: Int) -> ProbeAnswer {
        switch status {
        case 204 where bodyBytes == 0: .ok
        case 301, 302, 303, 307, 308: .portal("redirect (HTTP \(status))")
        case 200..<300: .portal("HTTP \(status) with a page")
        default: .failed("status \(status)")
        }
    }
}

/// One family's check: its verdict, and each endpoint's answer (`host: what`).
public struct FamilyCheck: Sendable, Hashable {
    public var verdict: OutsideVerdict
    public var answers: [String]

    public init(verdict: OutsideVerdict, answers: [String]) {
        self.verdict = verdict
        self.answers = answers
    }

    /// The verdict of the endpoints' answers: `ok` when one said so, else
    /// `portal` when one showed a portal, else `limited`.
    public init(_ answers: [(host: String, answer: ProbeAnswer)]) {
        self.answers = answers.map { host, answer in
            switch answer {
            case .ok: "\(host): ok"
            case .portal(let what), .failed(let what): "\(host): \(what)"
            }
        }
        if answers.contains(where: { $0.answer == .ok }) {
            verdict = .ok
        } else if answers.contains(where: { if case .portal = $0.answer { true } else { false } }) {
            verdict = .portal
        } else {
            verdict = .limited
        }
    }
}

/// A whole check: IPv4 and IPv6 apart (the two paths open and close independently).
public struct OutsideReport: Sendable, Hashable {
    public var ipv4: FamilyCheck
    public var ipv6: FamilyCheck

    public init(ipv4: FamilyCheck, ipv6: FamilyCheck) {
        self.ipv4 = ipv4
        self.ipv6 = ipv6
    }

    /// Traffic gets out on either family.
    public var reachable: Bool { ipv4.verdict == .ok || ipv6.verdict == .ok }
}

/// What the outside-access rules ask of the daemon.
public enum OutsideEffect: Sendable, Hashable {
    /// Run a check (the probe, or NetworkManager's `CheckConnectivity`); it answers with a report.
    case check
    /// The next check falls due at this instant (replaces any earlier one).
    case arm(Instant)
    case cancelTimer
    case post(AlertSubject)
    case close(AlertKind)
}

/// When outside access is checked, and what follows from a check — pure,
/// on the daemon's clock. A check runs when the session becomes `online`
/// (a login, a recovery after failures, a resume or a network change: each
/// is a transition to online), then on a long fallback while it stays online
/// — never per keep-alive, and no wake-up in between. A check that finds no
/// way out is confirmed a minute later; two in a row raise one alert for the
/// episode, closed by the next check that finds the way out. It never ends
/// the session or logs in again: the session is the CC server's business.
public struct OutsideAccess: Sendable {
    public private(set) var ipv4: OutsideVerdict
    public private(set) var ipv6: OutsideVerdict
    /// When the verdicts were found (nil: not yet, or the session left `online`).
    public private(set) var checkedAt: Instant?
    /// Each endpoint's answer at the last check.
    public private(set) var answers: [String] = []
    /// What NetworkManager's own check said last (nil: no NetworkManager, or it has not said).
    public private(set) var networkManager: NetworkConnectivity?
    private let enabled: Bool
    private var online = false
    private var checking = false
    /// Checks in a row that found no way out.
    private var failedInARow = 0
    private var alerted = false

    /// Between checks while nothing changes.
    public static let fallback: Duration = .seconds(20 * 60)
    /// A failed check is confirmed this much later.
    public static let confirmAfter: Duration = .seconds(60)

    public init(enabled: Bool) {
        self.enabled = enabled
        ipv4 = enabled ? .unknown : .off
        ipv6 = enabled ? .unknown : .off
    }

    /// The session's state changed.
    public mutating func sessionChanged(online nowOnline: Bool, at now: Instant) -> [OutsideEffect] {
        guard enabled, nowOnline != online else { return [] }
        online = nowOnline
        guard nowOnline else {
            // Not online, the question does not arise: nothing is checked until it is again.
            ipv4 = .unknown
            ipv6 = .unknown
            checkedAt = nil
            failedInARow = 0
            return [.cancelTimer]
        }
        return startCheck()
    }

    /// The check timer fired.
    public mutating func timerFired(at now: Instant) -> [OutsideEffect] {
        guard enabled, online else { return [] }
        return startCheck()
    }

    /// NetworkManager's `Connectivity` is `said` (at start, after its own
    /// check, or after the `CheckConnectivity` a check asked for). A change
    /// while online calls for a check of the daemon's own: its endpoints are
    /// domestic, NetworkManager's often are not.
    public mutating func networkManagerSaid(_ said: NetworkConnectivity, at now: Instant) -> [OutsideEffect] {
        let before = networkManager
        networkManager = said
        guard enabled, online, before != said, said != .unknown, before != nil || said != .full else { return [] }
        return startCheck()
    }

    /// A check's report came at `now`.
    public mutating func checked(_ report: OutsideReport, at now: Instant) -> [OutsideEffect] {
        guard enabled, checking else { return [] }
        checking = false
        // The session left meanwhile: the answer is about a path no longer in use.
        guard online else { return [] }
        ipv4 = report.ipv4.verdict
        ipv6 = report.ipv6.verdict
        // NetworkManager found a portal where the probe's endpoints did not answer at all
        // (a portal may swallow their names): the portal is the better word for the way out.
        if networkManager == .portal && ipv4 == .limited { ipv4 = .portal }
        checkedAt = now
        answers = report.ipv4.answers.map { "IPv4 " + $0 } + report.ipv6.answers.map { "IPv6 " + $0 }
            + (networkManager.map { ["NetworkManager: \($0.name)"] } ?? [])
        var effects: [OutsideEffect] = []
        if report.reachable {
            failedInARow = 0
            if alerted {
                alerted = false
                effects.append(.close(.noOutsideAccess))
            }
            effects.append(.arm(now + Self.fallback))
        } else {
            failedInARow += 1
            if failedInARow >= 2 && !alerted {
                alerted = true
                effects.append(.post(.noOutsideAccess(portal: ipv4 == .portal || ipv6 == .portal)))
            }
            effects.append(.arm(now + (failedInARow < 2 ? Self.confirmAfter : Self.fallback)))
        }
        return effects
    }

    private mutating func startCheck() -> [OutsideEffect] {
        guard !checking else { return [] }
        checking = true
        return [.cancelTimer, .check]
    }
}
