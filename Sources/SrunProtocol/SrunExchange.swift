import CurlTransport

/// How one operation of `SrunClient` ended, with the transport facts a log
/// line needs (and a test: `connectionsOpened` shows the connection kept).
public struct SrunExchange<Answer: Sendable>: Sendable {
    public var outcome: SrunOutcome<Answer>
    /// The HTTP status of the operation's last request, or 0 when none came.
    public var httpStatus: Int
    /// New connections opened over all the operation's requests (0 when the kept one served them).
    public var connectionsOpened: Int
    /// Requests made (a login makes two, four after an expired challenge).
    public var requests: Int

    public init(outcome: SrunOutcome<Answer>, httpStatus: Int = 0, connectionsOpened: Int = 0, requests: Int = 0) {
        self.outcome = outcome
        self.httpStatus = httpStatus
        self.connectionsOpened = connectionsOpened
        self.requests = requests
    }
}

/// An operation's result: the portal's answer, typed, or why there was none
/// (no answer in time, no route, an answer that is not the protocol's …).
public enum SrunOutcome<Answer: Sendable>: Sendable {
    case answered(Answer)
    case failed(TransportFailure)
}

extension SrunOutcome: Equatable where Answer: Equatable {}
extension SrunOutcome: Hashable where Answer: Hashable {}
