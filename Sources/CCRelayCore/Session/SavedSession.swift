import CoreVocabulary

/// What the daemon needs to carry on a CC/1 session after a restart without
/// logging in again: only used while the server's deadline has not passed.
/// The token is a secret: it lives only in the 0600 store and is never logged.
public struct SessionSnapshot: Sendable, Hashable, CustomStringConvertible {
    /// The server URL and account it belongs to; another configuration does not reuse it.
    public var server: String
    public var account: String
    public var token: String
    public var ip: String
    public var interval: Int
    public var timeout: Int
    /// The last report the server accepted.
    public var seq: UInt64
    /// When the server logs the session out without a keep-alive, in seconds since the Unix epoch.
    public var deadline: Double

    public init(server: String, account: String, token: String, ip: String, interval: Int, timeout: Int, seq: UInt64,
                deadline: Double) {
        self.server = server
        self.account = account
        self.token = token
        self.ip = ip
        self.interval = interval
        self.timeout = timeout
        self.seq = seq
        self.deadline = deadline
    }

    /// Why this snapshot (read back from the store) cannot be used at wall
    /// time `now`, or nil when it can: it is checked like network input.
    public func problem(now: Double) -> String? {
        guard SessionToken.isValid(token) else { return "its token is not a valid CC/1 token" }
        guard ServerTiming.intervals.contains(interval), ServerTiming.timeouts.contains(timeout) else {
            return "its interval \(interval) or timeout \(timeout) is out of bounds"
        }
        guard seq <= 1 << 53 else { return "its seq \(seq) is out of bounds" }
        guard deadline.isFinite, deadline - now <= Double(timeout) + 60 else {
            return "its deadline \(deadline) is not within its timeout from now"
        }
        guard ip.utf8.count <= 64, ip.utf8.allSatisfy({ (0x20...0x7e).contains($0) }) else { return "its address is not printable" }
        return nil
    }

    public var description: String {
        "SessionSnapshot(server: \(server), account: \(account), token: <redacted>, ip: \(ip), seq: \(seq), deadline: \(deadline))"
    }
}

/// What a saved session is worth when the daemon starts.
public enum SavedSessionUse: Sendable, Hashable {
    /// Carried on: its deadline has not passed (`secondsLeft` until it).
    case carryOn(CarriedSession, secondsLeft: Int)
    /// Damaged or tampered with: dropped, a fresh login follows quietly.
    case drop(problem: String)
    /// Another server's or account's, or out of time: a fresh login.
    case freshLogin
}

extension SessionSnapshot {
    /// Whether a daemon for `server` and `account` carries this session on at wall time `now`.
    public func use(server: String, account: String, now: Double) -> SavedSessionUse {
        guard self.server == server, self.account == account else { return .freshLogin }
        if let problem = problem(now: now) { return .drop(problem: problem) }
        let remaining = deadline - now
        guard remaining > 1 else { return .freshLogin }
        return .carryOn(
            CarriedSession(
                token: token, ip: ip,
                session: RestoredSession(interval: interval, timeout: timeout, remaining: .milliseconds(Int(remaining * 1000)), seq: seq)),
            secondsLeft: Int(remaining))
    }
}

extension Configuration {
    /// Which credentials a saved session belongs to: the user, or the certificate.
    public var sessionAccount: String { user ?? certificate ?? "" }
}
