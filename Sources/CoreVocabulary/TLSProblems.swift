/// Why the campus server's identity could not be verified (`server-untrusted`).
/// No request is sent to such a server: it is often a captive portal
/// answering in the campus server's place.
public enum ServerTrustProblem: Sendable, Hashable, CaseIterable {
    /// Its certificate is from a CA that neither the system nor `ca-file` trusts (or self-signed).
    case unknownIssuer
    /// Its certificate has expired or is not valid yet.
    case expired
    /// Its certificate is for another host name.
    case wrongName
    /// Its public key does not match `pinned-key`.
    case pinMismatch
    /// Verification failed for another reason.
    case other
}

/// How the campus server refused the student certificate during the TLS
/// handshake (its TLS alert), where real mutual-TLS servers refuse it.
public enum HandshakeRefusal: Sendable, Hashable, CaseIterable {
    /// `unknown_ca`: the certificate is not from a CA the campus trusts.
    case unknownAuthority
    /// `certificate_expired`: expired or not valid yet.
    case expired
    /// `certificate_revoked`.
    case revoked
    /// `certificate_required`: no certificate was presented.
    case required
    /// `bad_certificate`, `unsupported_certificate`, `certificate_unknown`,
    /// `access_denied` or `handshake_failure`.
    case notAccepted
}
