import CurlTransport
import CCurl
import FoundationEssentials
import CCRelayCore

/// Turns what came back from the server into an `Outcome`: pure functions
/// of the status, the body and the transport result.
enum ReplyClassifier {
    /// The CC/1 endpoints, whose statuses mean different things.
    enum Endpoint: Sendable {
        case login, keepAlive, logout
    }

    static let bodyLimit = 64 * 1024
    /// One decoder for every reply (made once; its settings are never changed).
    private static let decoder = JSONDecoder()

    static func classify(_ endpoint: Endpoint, status: Int, body: [UInt8], retryAfterHeader: String?) -> Outcome {
        let decoder = Self.decoder
        let data = Data(body)
        // Decoded only for the statuses that carry one (not for every accepted keep-alive).
        var error: Wire.ErrorReply? { try? decoder.decode(Wire.ErrorReply.self, from: data) }
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

    /// A transfer that did not complete, by libcurl's code, the OS errno
    /// and libcurl's error text (which carries OpenSSL's reason: the TLS
    /// alert a server refused the client certificate with, or why the
    /// server's certificate failed verification).
    static func transportFailure(_ code: CURLcode, osErrno: Int, bodyOverflowed: Bool, detail: String)
        -> TransportFailure
    {
        switch code {
        case CURLE_WRITE_ERROR where bodyOverflowed:
            return .replyTooLarge
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_INTERFACE_FAILED:
            return .noNetwork(detail)
        case CURLE_COULDNT_CONNECT:
            // ENETUNREACH (101) and EHOSTUNREACH (113): no route at all.
            return osErrno == 101 || osErrno == 113 ? .noNetwork(detail) : .connectionLost(detail)
        case CURLE_OPERATION_TIMEDOUT:
            return .timeout
        case CURLE_PEER_FAILED_VERIFICATION:
            return .serverUntrusted(trustProblem(detail), detail)
        case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
            return .serverUntrusted(.pinMismatch, detail)
        case CURLE_SSL_CERTPROBLEM, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ENGINE_NOTFOUND,
            CURLE_SSL_ENGINE_SETFAILED:
            return .credentialFilesUnusable(detail)
        case CURLE_SSL_CONNECT_ERROR, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE,
            CURLE_SSL_CIPHER:
            // A server refusing the certificate sends a TLS alert: in the
            // handshake (TLS 1.2) or on the first read after it (TLS 1.3).
            if let refusal = handshakeRefusal(detail) { return .clientCertificateRefused(refusal, detail) }
            return .connectionLost(detail)
        default:
            return .protocolError(detail)
        }
    }

    /// The TLS alert in OpenSSL's words ("tlsv1 alert unknown ca", "sslv3
    /// alert certificate expired", "tlsv13 alert certificate required" …).
    static func handshakeRefusal(_ detail: String) -> HandshakeRefusal? {
        let text = detail.lowercased()
        guard text.contains("alert ") else { return nil }
        if text.contains("alert unknown ca") { return .unknownAuthority }
        if text.contains("alert certificate expired") { return .expired }
        if text.contains("alert certificate revoked") { return .revoked }
        if text.contains("alert certificate required") { return .required }
        for other in ["alert bad certificate", "alert unsupported certificate", "alert certificate unknown",
                      "alert access denied", "alert handshake failure"] where text.contains(other) {
            return .notAccepted
        }
        return nil
    }

    /// Why OpenSSL could not verify the server, from its verify message.
    static func trustProblem(_ detail: String) -> ServerTrustProblem {
        let text = detail.lowercased()
        if text.contains("has expired") || text.contains("not yet valid") { return .expired }
        if text.contains("subject name") || text.contains("host name") || text.contains("hostname") { return .wrongName }
        if text.contains("issuer") || text.contains("self-signed") || text.contains("self signed")
            || text.contains("unable to verify") || text.contains("unknown ca")
        {
            return .unknownIssuer
        }
        return .other
    }
}
