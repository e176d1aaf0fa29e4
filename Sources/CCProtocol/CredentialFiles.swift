import COpenSSL
#if canImport(Glibc)
import Glibc
#endif

/// Facts about the student's certificate, read with OpenSSL's libcrypto.
public struct CertificateFacts: Sendable, Hashable {
    /// The subject, one line (`CN=20231234,O=Campus`).
    public var subject: String
    /// Seconds from now until `notAfter`; negative once expired.
    public var secondsUntilExpiry: Int64
    /// `notAfter` as `YYYY-MM-DD` (UTC).
    public var notAfterDate: String

    /// Whole days left, rounded down; negative once expired.
    public var daysUntilExpiry: Int64 { secondsUntilExpiry >= 0 ? secondsUntilExpiry / 86_400 : -1 - (-secondsUntilExpiry / 86_400) }
}

/// Checks the certificate and key files before they are used: readable,
/// the private key readable by its owner alone, the certificate parseable.
public enum CredentialFiles {
    /// Reads `certificate` (PEM, or PKCS#12 by its `.p12`/`.pfx` name) and checks
    /// the file holding the private key (`key`, or the certificate file itself).
    public static func inspect(certificate: String, key: String?, passphrase: String?) throws(ClientConfigurationError)
        -> CertificateFacts
    {
        let isPKCS12 = certificate.lowercased().hasSuffix(".p12") || certificate.lowercased().hasSuffix(".pfx")
        let certificateBytes = try read(certificate, what: "certificate")
        if let key {
            _ = try read(key, what: "private key")
            try checkPrivate(key)
        } else if isPKCS12 || certificateBytes.contains(subsequence: Array("PRIVATE KEY-----".utf8)) {
            try checkPrivate(certificate)
        } else {
            throw ClientConfigurationError(
                "certificate \(certificate) holds no private key; set [auth] key to the file that has it")
        }
        let x509 = try isPKCS12
            ? parsePKCS12(certificateBytes, path: certificate, passphrase: passphrase)
            : parsePEM(certificateBytes, path: certificate)
        defer { X509_free(x509) }
        var seconds: Int64 = 0
        guard let notAfter = X509_get0_notAfter(x509), copenssl_seconds_until(notAfter, &seconds) == 1 else {
            throw ClientConfigurationError("certificate \(certificate) has an unreadable expiry date")
        }
        return CertificateFacts(subject: subjectLine(x509), secondsUntilExpiry: seconds, notAfterDate: date(notAfter))
    }

    private static func read(_ path: String, what: String) throws(ClientConfigurationError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw ClientConfigurationError("cannot read \(what) \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = Glibc.read(fd, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk.prefix(count)
            if bytes.count > 1 << 20 { throw ClientConfigurationError("\(what) \(path) is larger than 1 MiB") }
        }
        return bytes
    }

    /// A private key others can read is refused, with the command that fixes it.
    private static func checkPrivate(_ path: String) throws(ClientConfigurationError) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw ClientConfigurationError("cannot read private key \(path): \(String(cString: strerror(errno)))")
        }
        if info.st_mode & 0o077 != 0 {
            throw ClientConfigurationError(
                "private key \(path) is readable by other users (mode \(String(info.st_mode & 0o777, radix: 8))); fix it with: chmod 600 \(path)")
        }
    }

    private static func parsePEM(_ bytes: [UInt8], path: String) throws(ClientConfigurationError) -> OpaquePointer {
        let x509 = bytes.withUnsafeBytes { raw -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_X509(bio, nil, nil, nil)
        }
        guard let x509 else {
            ERR_clear_error()
            throw ClientConfigurationError("certificate \(path) is not a PEM certificate")
        }
        return x509
    }

    private static func parsePKCS12(_ bytes: [UInt8], path: String, passphrase: String?) throws(ClientConfigurationError)
        -> OpaquePointer
    {
        let parsed = bytes.withUnsafeBytes { raw -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            guard let bundle = d2i_PKCS12_bio(bio, nil) else { return nil }
            defer { PKCS12_free(bundle) }
            var key: OpaquePointer?
            var certificate: OpaquePointer?
            guard PKCS12_parse(bundle, passphrase ?? "", &key, &certificate, nil) == 1 else { return nil }
            EVP_PKEY_free(key)
            return certificate
        }
        guard let parsed else {
            ERR_clear_error()
            throw ClientConfigurationError(
                "cannot open PKCS#12 bundle \(path): not PKCS#12, or the passphrase is wrong")
        }
        return parsed
    }

    private static func subjectLine(_ x509: OpaquePointer) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        X509_NAME_print_ex(bio, X509_get_subject_name(x509), 0, copenssl_xn_flag_rfc2253)
        var pointer: UnsafeMutablePointer<CChar>?
        let length = BIO_ctrl(bio, BIO_CTRL_INFO, 0, &pointer)
        guard length > 0, let pointer else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: pointer, count: length), as: UTF8.self)
    }

    private static func date(_ time: UnsafePointer<ASN1_TIME>) -> String {
        var parts = tm()
        guard ASN1_TIME_to_tm(time, &parts) == 1 else { return "?" }
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))"
    }
}

extension Array where Element == UInt8 {
    func contains(subsequence: [UInt8]) -> Bool {
        guard subsequence.count <= count else { return false }
        return (0...(count - subsequence.count)).contains { self[$0..<($0 + subsequence.count)].elementsEqual(subsequence) }
    }
}
