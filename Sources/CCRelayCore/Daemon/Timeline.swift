import CoreVocabulary

/// One change users may later ask about ("why did it drop last night?"):
/// the session's state, or whether traffic gets out, from what to what, and why.
public struct TimelineEntry: Sendable, Hashable {
    public enum Subject: String, Sendable, Hashable {
        /// The session's state (`DaemonState` names).
        case state
        /// Outside access over IPv4 (`OutsideVerdict` names).
        case outside
    }

    /// When, in seconds since the Unix epoch (the shell stamps it when it writes the entry).
    public var at: Double
    public var subject: Subject
    public var from: String
    public var to: String
    /// Why, in a few words ("keep-alive timed out", "the server ended the session (kicked)").
    public var cause: String

    public init(at: Double, subject: Subject, from: String, to: String, cause: String) {
        self.at = at
        self.subject = subject
        self.from = from
        self.to = to
        self.cause = cause
    }
}

/// What an event did to the session, in the few words the timeline keeps.
enum TimelineCause {
    static func of(_ event: DaemonEvent) -> String {
        switch event {
        case .started(let start): start.carriedOn == nil ? "the daemon started" : "the daemon started, carrying on with its session"
        case .timerFired(.session, _): "a keep-alive or retry fell due"
        case .timerFired: "a timer"
        case .system(.sleeping): "the machine went to sleep"
        case .system(.resumed): "the machine woke up"
        case .system(.connectivity(online: false)): "the network went down"
        case .system(.connectivity(online: true)): "the network came back"
        case .system: "the system"
        case .network(_, let why): why
        case .networkConnectivity(let said): "NetworkManager says \(said.name)"
        case .passwordMissing: "no password for the login"
        case .loginAnswered(let result): "login: " + (result.problem.map { "\($0.code.rawValue)" } ?? "granted")
        case .keepAliveAnswered(let result): keepAlive(result)
        case .user(.login): "the user asked to log in"
        case .user(.logout): "the user asked to log out"
        case .bubble(.clicked(_, let action)): "the user clicked \(action)"
        case .credentialFileChanged: "a certificate file changed"
        case .outsideChecked: "an outside-access check"
        case .stop: "the daemon stopped"
        default: "the daemon"
        }
    }

    private static func keepAlive(_ result: KeepAliveResult) -> String {
        switch result.answer {
        case .accepted: "keep-alive accepted"
        case .loggedOut(let reason, _): "the server ended the session (\(reason))"
        case .refused: "keep-alive refused: " + (result.problem?.code.rawValue ?? "refused")
        case .rateLimited: "keep-alive: the server asked to slow down"
        case .transientFailure(let what): "keep-alive failed: \(what)"
        case .noNetwork: "keep-alive: no network"
        case .untrusted: "keep-alive: the server could not be verified"
        }
    }
}

/// The summary line of `ccrelay timeline`: how much of a window the session
/// was online, and what ended each time it dropped.
public struct TimelineSummary: Sendable, Hashable {
    /// Drops out of `online` with one cause, and how many.
    public struct Drops: Sendable, Hashable {
        public var cause: String
        public var count: Int
    }

    /// The share of the window spent `online`, 0…1 (nil: nothing known of it).
    public var onlineShare: Double?
    /// How much of the window the entries tell, in seconds: the share is of
    /// this, which is less than the window while the records are younger.
    public var recorded: Double
    /// Each drop out of `online`, by its cause, most frequent first.
    public var drops: [Drops]

    /// The summary of the window `since`…`now` from the state entries (the
    /// state before the window is the last one entered before it).
    public init(_ entries: [TimelineEntry], since: Double, now: Double) {
        let states = entries.filter { $0.subject == .state }.sorted { $0.at < $1.at }
        var online = 0.0
        var known = 0.0
        var current = states.last { $0.at <= since }?.to
        var from = since
        var counts: [String: Int] = [:]
        for entry in states where entry.at > since && entry.at <= now {
            if let current {
                known += entry.at - from
                if current == DaemonState.online.rawValue { online += entry.at - from }
            }
            if entry.from == DaemonState.online.rawValue && entry.to != DaemonState.online.rawValue {
                counts[entry.cause, default: 0] += 1
            }
            current = entry.to
            from = entry.at
        }
        if let current, now > from {
            known += now - from
            if current == DaemonState.online.rawValue { online += now - from }
        }
        onlineShare = known > 0 ? online / known : nil
        recorded = known
        drops = counts.map { Drops(cause: $0.key, count: $0.value) }
            .sorted { $0.count != $1.count ? $0.count > $1.count : $0.cause < $1.cause }
    }
}
