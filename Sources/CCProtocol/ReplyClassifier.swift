import CurlTransport
import CCRelayCore

/// Turns what came back from the server into an `Outcome`: pure functions
/// of the status, the body and the transport result.
enum ReplyClassifier {
    /// The CC/1 endpoints, whose statuses mean different things.
    enum Endpoint: Sendable {
        case login, keepAlive, logout
    }

    static let bodyLimit = 64 * 1024

    static func classify(_ endpoint: Endpoint, status: Int, body: [UInt8], retryAfterHeader: String?) -> Outcome {
        // Read only for the statuses that carry one.
        var error: Wire.ErrorReply? { Wire.Members(body: body).map(Wire.ErrorReply.init) }
        switch (endpoint, status) {
        case (.login, 200), (.login, 201):
            guard let reply = Wire.Members(body: body).map(Wire.LoginReply.init) else {
                return .transportFailure(.protocolError("the login reply is not CC/1 JSON"))
            }
            switch Wire.validate(reply) {
            case .success(let grant): return .loggedIn(grant)
            case .failure(let problem): return .transportFailure(.protocolError(problem.text))
            }
        case (.keepAlive, 200):
            guard let reply = Wire.Members(body: body).map(Wire.KeepAliveReply.init) else {
                return .transportFailure(.protocolError("the keep-alive reply is not CC/1 JSON"))
            }
            switch Wire.validate(reply) {
            case .success(let grant): return .accepted(grant)
            case .failure(let problem): return .transportFailure(.protocolError(problem.text))
            }
        case (.logout, 200), (.logout, 204), (.logout, 401), (.logout, 410):
            return .loggedOutByRequest
        case (.keepAlive, 401), (.keepAlive, 410):
            let reply = error
            return .loggedOut(reason: reply?.reason.map { String($0.prefix(64)) } ?? "unknown", message: reply?.message)
        case (.keepAlive, 428):
            return .locationRequired(message: error?.message)
        case (_, 429):
            return .rateLimited(retryAfter: Wire.retryAfter(header: retryAfterHeader) ?? error?.retryAfter)
        case (.login, 401), (.login, 403), (.login, 409):
            let fallback: CredentialRefusal =
                switch status {
                case 403: .accountDisabled
                case 409: .onlineElsewhere
                default: .certificateRejected
                }
            let reply = error
            let refusal = reply?.error.flatMap(CredentialRefusal.init(rawValue:)) ?? fallback
            return .credentialsRefused(refusal, message: reply?.message)
        case (_, 500...599):
            return .serverError(status: status, message: error?.message)
        default:
            return .transportFailure(.protocolError("unexpected HTTP status \(status)"))
        }
    }
}
