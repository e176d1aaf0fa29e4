import CCRelayCore
import CurlTransport

extension Outcome {
    /// The problem this outcome reports, or nil for a success.
    public var problem: ProblemReport? {
        func server(_ message: String?) -> String {
            guard let message, !message.isEmpty else { return "" }
            return " The server said: " + message
        }
        switch self {
        case .loggedIn, .accepted, .loggedOutByRequest:
            return nil
        case .loggedOut(let reason, let message):
            return ProblemReport(
                code: .loggedOut, sentence: "The campus server ended the session (\(reason))." + server(message))
        case .locationRequired(let message):
            return ProblemReport(
                code: .locationRequired,
                sentence: "The campus requires this computer's location with every keep-alive." + server(message))
        case .rateLimited:
            return ProblemReport(
                code: .rateLimited, sentence: "The campus server asked ccrelay to slow down (HTTP 429); it waits and tries again.")
        case .credentialsRefused(let refusal, let message):
            let (code, text): (ProblemCode, String) =
                switch refusal {
                case .certificateRejected: (ProblemCode.certificateRefused, "The campus server refused your student certificate.")
                case .badCredentials: (ProblemCode.badCredentials, "The campus server refused your user name or password.")
                case .accountDisabled: (ProblemCode.accountDisabled, "Your campus network account is disabled.")
                case .quotaExhausted: (ProblemCode.quotaExhausted, "Your campus network quota is used up.")
                case .onlineElsewhere: (ProblemCode.onlineElsewhere, "Your account is online on another device.")
                }
            return ProblemReport(code: code, sentence: text + server(message))
        case .serverError(let status, _):
            return ProblemReport(
                code: .serverError, sentence: "The campus server has a problem (HTTP \(status)); ccrelay tries again.")
        case .transportFailure(let failure):
            return failure.problem
        }
    }
}

extension TransportFailure {
    /// The problem in a sentence; libcurl's own words come last, in brackets.
    public var problem: ProblemReport {
        switch self {
        case .noNetwork(let detail):
            return ProblemReport(code: .noNetwork, sentence: "The campus server cannot be reached from this network [\(detail)].")
        case .connectionLost(let detail):
            return ProblemReport(
                code: .connectionLost, sentence: "The connection to the campus server broke; ccrelay tries again [\(detail)].")
        case .timeout:
            return ProblemReport(code: .timeout, sentence: "The campus server did not answer in time; ccrelay tries again.")
        case .serverUntrusted(.pinMismatch, _):
            return ProblemReport(
                code: .pinMismatch,
                sentence: "The campus server's key does not match [server] pinned-key, so nothing was sent. Often a captive portal: log in to it in a browser.")
        case .serverUntrusted(_, let detail):
            return ProblemReport(
                code: .serverUntrusted,
                sentence: "The campus server's certificate could not be verified, so nothing was sent. Often a captive portal: log in to it in a browser; otherwise check [server] ca-file [\(detail)].")
        case .clientCertificateRefused(let refusal, _):
            let reason =
                switch refusal {
                case .unknownAuthority: "it is not from an authority the campus trusts"
                case .expired: "it has expired or is not valid yet"
                case .revoked: "it was revoked"
                case .required: "none was presented"
                case .notAccepted: "it was not accepted"
                }
            return ProblemReport(
                code: refusal == .expired ? .certificateExpired : .certificateRefused,
                sentence: "The campus server refused your student certificate during the secure connection: \(reason). Fix [auth] certificate, then run: ccrelay login")
        case .credentialFilesUnusable(let detail):
            return ProblemReport(
                code: .certificateUnusable,
                sentence: "Your certificate, key or CA file cannot be used [\(detail)]. Check them with: ccrelay config check")
        case .replyTooLarge:
            return ProblemReport(
                code: .replyTooLarge, sentence: "The campus server sent a reply larger than CC/1 allows (64 KiB); ccrelay tries again.")
        case .protocolError(let detail):
            return ProblemReport(
                code: .protocolError, sentence: "The campus server's reply was not understood (\(detail)); ccrelay tries again.")
        }
    }
}
