import CCProtocol
import CurlTransport
import CCRelayCore
import CoreVocabulary

/// A login's exchange read once, for everything the shell takes from it:
/// the answer the state machine acts on, the grant, the problem `GetStatus`
/// reports, the malformed notices dropped.
struct LoginReading {
    let answer: LoginAnswer
    let grant: (session: String, ip: String, location: ServerLocationPolicy)?
    let problem: ProblemReport?
    let droppedNotices: Int

    init(_ exchange: Exchange) {
        answer = ExchangeReading.loginAnswer(exchange)
        problem = exchange.outcome.problem
        if case .loggedIn(let grant) = exchange.outcome {
            self.grant = (grant.session, grant.ip, grant.location)
            droppedNotices = grant.droppedNotices
        } else {
            grant = nil
            droppedNotices = 0
        }
    }
}

/// A keep-alive's exchange read once: the answer, whether it was refused for
/// want of a location (428: true) or accepted (false), the problem, the dropped notices.
struct KeepAliveReading {
    let answer: KeepAliveAnswer
    let locationRejected: Bool?
    let problem: ProblemReport?
    let droppedNotices: Int

    init(_ exchange: Exchange) {
        answer = ExchangeReading.keepAliveAnswer(exchange)
        problem = exchange.outcome.problem
        switch exchange.outcome {
        case .accepted(let grant):
            locationRejected = false
            droppedNotices = grant.droppedNotices
        case .locationRequired:
            locationRejected = true
            droppedNotices = 0
        default:
            locationRejected = nil
            droppedNotices = 0
        }
    }
}

/// How an exchange's outcome maps onto the state machine's answers.
enum ExchangeReading {
    /// A login's exchange, in the state machine's terms.
    static func loginAnswer(_ exchange: Exchange) -> LoginAnswer {
        if case .loggedIn(let grant) = exchange.outcome {
            return .loggedIn(interval: grant.interval, timeout: grant.timeout, notices: notices(grant.notices))
        }
        return answer(failure(exchange.outcome))
    }

    /// A keep-alive's exchange, in the state machine's terms.
    static func keepAliveAnswer(_ exchange: Exchange) -> KeepAliveAnswer {
        switch exchange.outcome {
        case .accepted(let grant):
            return .accepted(interval: grant.interval, timeout: grant.timeout, notices: notices(grant.notices))
        case .loggedOutByRequest: return .loggedOut(reason: .requested, message: nil)
        case .loggedOut(let reason, let message): return .loggedOut(reason: LogoutReason(wire: reason), message: message)
        default: return answer(failure(exchange.outcome))
        }
    }

    /// A login that got no usable answer (any protocol), in the state machine's terms.
    static func loginAnswer(failing transport: TransportFailure) -> LoginAnswer { answer(failure(transport)) }

    /// A check or keep-alive that got no usable answer (any protocol), in the state machine's terms.
    static func keepAliveAnswer(failing transport: TransportFailure) -> KeepAliveAnswer { answer(failure(transport)) }

    private static func notices(_ list: [Notice]) -> [NoticeInfo] {
        list.map { NoticeInfo(id: $0.id, title: $0.title, body: $0.body, urgency: Urgency(noticeText: $0.urgency)) }
    }

    /// The ways an exchange can fail, the same for both requests.
    private enum Failure {
        case refused(CredentialProblem, String?)
        case rateLimited(Int?)
        case transient(String)
        case noNetwork
        case untrusted(ServerTrustProblem)
    }

    /// A failure as either answer: both enums have these cases (`AnswerToAFailure`).
    private static func answer<Answer: AnswerToAFailure>(_ failure: Failure) -> Answer {
        switch failure {
        case .refused(let problem, let message): .refused(problem, message: message)
        case .rateLimited(let retryAfter): .rateLimited(retryAfter: retryAfter)
        case .transient(let what): .transientFailure(what)
        case .noNetwork: .noNetwork
        case .untrusted(let problem): .untrusted(problem)
        }
    }

    private static func failure(_ outcome: Outcome) -> Failure {
        switch outcome {
        case .loggedIn, .accepted, .loggedOutByRequest, .loggedOut: return .transient("an answer that does not fit the request")
        case .locationRequired: return .transient("the campus requires a location fix")
        case .rateLimited(let retryAfter): return .rateLimited(retryAfter)
        case .credentialsRefused(let refusal, let message):
            let problem: CredentialProblem =
                switch refusal {
                case .certificateRejected: .certificateRejected
                case .badCredentials: .badPassword
                case .accountDisabled: .accountDisabled
                case .quotaExhausted: .quotaExhausted
                case .onlineElsewhere: .onlineElsewhere
                }
            return .refused(problem, message)
        case .serverError(let status, _): return .transient("HTTP \(status)")
        case .transportFailure(let failure): return Self.failure(failure)
        }
    }

    /// A request that got no usable answer, the same for every protocol.
    private static func failure(_ failure: TransportFailure) -> Failure {
        switch failure {
        case .noNetwork: .noNetwork
        case .serverUntrusted(let problem, _): .untrusted(problem)
        case .clientCertificateRefused(let refusal, _): .refused(.refusedInHandshake(refusal), nil)
        case .credentialFilesUnusable(let detail): .refused(.unusableFiles(detail: detail), nil)
        default: .transient(failure.problem.code.rawValue)
        }
    }
}

/// The failure cases `LoginAnswer` and `KeepAliveAnswer` share (their enum cases are these constructors).
protocol AnswerToAFailure {
    static func refused(_ problem: CredentialProblem, message: String?) -> Self
    static func rateLimited(retryAfter: Int?) -> Self
    static func transientFailure(_ what: String) -> Self
    static var noNetwork: Self { get }
    static func untrusted(_ problem: ServerTrustProblem) -> Self
}

extension LoginAnswer: AnswerToAFailure {}
extension KeepAliveAnswer: AnswerToAFailure {}
