import CCurl
import FoundationEssentials

/// Turns what came back from the server into an `Outcome`: pure functions
/// of the status, the body and the transport result.
enum ReplyClassifier {
    /// The CC/1 endpoints, whose statuses mean different things.
    enum Endpoint: Sendable {
        case login, keepAlive, logout
    }

    static let bodyLimit = 64 * 1024

    static func classify(_ endpoint: Endpoint, status: Int, body: [UInt8], retryAfterHeader: String?) -> Outcome {
        let decoder = JSONDecoder()
        let data = Data(body)
        let error = try? decoder.decode(Wire.ErrorReply.self, from: data)
        switch (endpoint, status) {
        case (.login, 200), (.login, 201):
            guard let reply = try? decoder.decode(Wire.LoginReply.self, from: data) else {
                return .transportFailure(.protocolError("the login reply is not CC/1 JSON"))
            }
            switch Wire.validate(reply) {
            case .success(let grant): return .loggedIn(grant)
            case .failure(let problem): return .transportFailure(.protocolError(problem.text))
            }
        case (.keepAlive, 200):
            guard let reply = try? decoder.decode(Wire.KeepAliveReply.self, from: data) else {
                return .transportFailure(.protocolError("the keep-alive reply is not CC/1 JSON"))
            }
            switch Wire.validate(reply) {
            case .success(let grant): return .accepted(grant)
            case .failure(let problem): return .transportFailure(.protocolError(problem.text))
            }
        case (.logout, 200), (.logout, 204), (.logout, 401), (.logout, 410):
            return .loggedOutByRequest
        case (.keepAlive, 401), (.keepAlive, 410):
            return .loggedOut(reason: error?.reason ?? "unknown", message: error?.message)
        case (.keepAlive, 428):
            return .locationRequired(message: error?.message)
        case (_, 429):
            let header = retryAfterHeader.flatMap { Int($0.trimmingCharacters(in: [" ", "\t", "\r", "\n"])) }
            return .rateLimited(retryAfter: header ?? error?.retry_after)
        case (.login, 401), (.login, 403), (.login, 409):
            let fallback: CredentialRefusal =
                switch status {
                case 403: .accountDisabled
                case 409: .onlineElsewhere
                default: .certificateRejected
                }
            let refusal = error?.error.flatMap(CredentialRefusal.init(rawValue:)) ?? fallback
            return .credentialsRefused(refusal, message: error?.message)
        case (_, 500...599):
            return .serverError(status: status, message: error?.message)
        default:
            return .transportFailure(.protocolError("unexpected HTTP status \(status)"))
        }
    }

    /// A transfer that did not complete, by libcurl's code and the OS errno.
    static func transportFailure(_ code: CURLcode, osErrno: Int, bodyOverflowed: Bool, detail: String)
        -> TransportFailure
    {
        switch code {
        case CURLE_WRITE_ERROR where bodyOverflowed:
            return .protocolError("the reply is larger than 64 KiB")
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_INTERFACE_FAILED:
            return .noNetwork(detail)
        case CURLE_COULDNT_CONNECT:
            // ENETUNREACH (101) and EHOSTUNREACH (113): no route at all.
            return osErrno == 101 || osErrno == 113 ? .noNetwork(detail) : .connectionLost(detail)
        case CURLE_OPERATION_TIMEDOUT:
            return .timeout
        case CURLE_GOT_NOTHING, CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_PARTIAL_FILE:
            return .connectionLost(detail)
        case CURLE_PEER_FAILED_VERIFICATION:
            return .serverCertificateUntrusted(detail)
        case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
            return .pinMismatch
        case CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CRL_BADFILE:
            return .clientCertificate(detail)
        case CURLE_SSL_CONNECT_ERROR:
            // The handshake failed: a server that refuses our certificate at the
            // TLS level looks like this, as does one speaking no TLS at all.
            return .clientCertificate(detail)
        default:
            return .protocolError(detail)
        }
    }
}
