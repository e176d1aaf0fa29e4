import CCurl
import CoreVocabulary

/// Transport failures, split the way a user needs them.
public enum TransportFailure: Sendable, Hashable {
    /// No route, interface down, or the name does not resolve.
    case noNetwork(String)
    /// The server refused or reset the connection, or answered nothing.
    case connectionLost(String)
    /// No answer in time.
    case timeout
    /// The server's certificate or key could not be verified (often a
    /// captive portal); nothing was sent.
    case serverUntrusted(ServerTrustProblem, String)
    /// The server refused the client certificate with a TLS alert.
    case clientCertificateRefused(HandshakeRefusal, String)
    /// The client certificate, its key or the CA file cannot be used (a
    /// key that does not match, a file of the wrong kind): the user must act.
    case credentialFilesUnusable(String)
    /// The answer is larger than the protocol allows (64 KiB).
    case replyTooLarge
    /// The answer broke the protocol: bad JSON, an unexpected status.
    case protocolError(String)
}

extension TransportFailure {
    /// A transfer that did not complete, by libcurl's code, the OS errno
    /// and libcurl's error text (which carries OpenSSL's reason: the TLS
    /// alert a server refused the client certificate with, or why the
    /// server's certificate failed verification).
    public static func classify(_ code: CURLcode, osErrno: Int, bodyOverflowed: Bool, detail: String) -> TransportFailure {
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
    public static func handshakeRefusal(_ detail: String) -> HandshakeRefusal? {
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
    public static func trustProblem(_ detail: String) -> ServerTrustProblem {
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
