/// What a forwarding target answered: its status, what it said (without
/// the request's secrets) and the verdict on it.
public struct ForwardAnswer: Sendable, Hashable {
    /// The HTTP status, or the last SMTP reply code (0 when none came).
    public var status: Int
    /// The start of its reply body, printable characters only.
    public var text: String
    /// What the answer means for this message and the target's queue.
    public var verdict: ForwardVerdict

    public var delivered: Bool { verdict == .delivered }
    /// Why it does not count as delivered, or nil when it does.
    public var failure: String? { verdict.failure }

    public init(status: Int, text: String, verdict: ForwardVerdict) {
        self.status = status
        self.text = text
        self.verdict = verdict
    }
}
