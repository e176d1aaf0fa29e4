import CoreVocabulary
import CurlTransport
import EventLoop
import COpenSSL
import FileAccess
import CCRelayCore
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

/// Checks the certificate, key and CA files before they are used: regular
/// files (never opened in a way that blocks), readable, the private key
/// readable by its owner alone, unencrypted (a library never prompts for a
/// passphrase), a key that belongs to the certificate, a CA file that holds
/// certificates. Every refusal names the file and the fix, in the language
/// of the `localize` given.
public enum CredentialFiles {
    /// Reads `certificate` (PEM, or PKCS#12 by its `.p12`/`.pfx` name) and checks
    /// the file holding the private key (`key`, or the certificate file itself).
    public static func inspect(certificate: String, key: String?, passphrase: String?, localize: Localizer) throws(ClientConfigurationError)
        -> CertificateFacts
    {
        let isPKCS12 = Configuration.isPKCS12Bundle(certificate)
        let certificateBytes = try read(certificate, failing: localize("cannot read certificate %s: %s"), key: "auth.certificate", localize)
        let x509: OpaquePointer
        let privateKey: OpaquePointer
        if isPKCS12 {
            try checkPrivate(certificate, key: "auth.certificate", localize)
            (x509, privateKey) = try parsePKCS12(certificateBytes, path: certificate, passphrase: passphrase, localize)
        } else {
            x509 = try parsePEM(certificateBytes, path: certificate, localize)
            let keyPath = key ?? certificate
            let keyBytes = key == nil ? certificateBytes : try read(keyPath, failing: localize("cannot read private key %s: %s"), key: "auth.key", localize)
            guard key != nil || keyBytes.contains(subsequence: Array("PRIVATE KEY-----".utf8)) else {
                X509_free(x509)
                throw ClientConfigurationError(
                    TextTemplate.fill(localize("certificate %s holds no private key; set [auth] key to the file that has it"), certificate),
                    key: "auth.certificate")
            }
            do {
                try checkPrivate(keyPath, key: key == nil ? "auth.certificate" : "auth.key", localize)
                privateKey = try parseKey(keyBytes, path: keyPath, passphrase: passphrase, configKey: key == nil ? "auth.certificate" : "auth.key",
                                          localize)
            } catch {
                X509_free(x509)
                throw error
            }
        }
        defer {
            X509_free(x509)
            EVP_PKEY_free(privateKey)
        }
        guard X509_check_private_key(x509, privateKey) == 1 else {
            ERR_clear_error()
            throw ClientConfigurationError(
                TextTemplate.fill(
                    localize("the private key %s does not belong to certificate %s; set [auth] key to the key made with this certificate"),
                    key ?? certificate, certificate),
                key: key == nil ? "auth.certificate" : "auth.key")
        }
        var seconds: Int64 = 0
        guard let notAfter = X509_get0_notAfter(x509), copenssl_seconds_until(notAfter, &seconds) == 1 else {
            throw ClientConfigurationError(TextTemplate.fill(localize("certificate %s has an unreadable expiry date"), certificate), key: "auth.certificate")
        }
        return CertificateFacts(subject: subjectLine(x509), secondsUntilExpiry: seconds, notAfterDate: date(notAfter))
    }

    /// Checks that `path` is a readable file of PEM CA certificates.
    public static func checkCertificateAuthorities(_ path: String, localize: Localizer) throws(ClientConfigurationError) {
        let bytes = try read(path, failing: localize("cannot read ca-file %s: %s"), key: "server.ca-file", localize)
        let count = bytes.withUnsafeBytes { raw -> Int in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return 0 }
            defer { BIO_free(bio) }
            var count = 0
            while let certificate = PEM_read_bio_X509(bio, nil, refusePassphrase, nil) {
                X509_free(certificate)
                count += 1
            }
            return count
        }
        ERR_clear_error()
        guard count > 0 else {
            throw ClientConfigurationError(
                TextTemplate.fill(localize("ca-file %s holds no PEM certificate; set it to the campus CA certificate (-----BEGIN CERTIFICATE-----)"), path),
                key: "server.ca-file")
        }
    }

    /// The file at `path`, or the refusal `failing` (the path and the reason for `%s`) of `key`.
    private static func read(_ path: String, failing: String, key: String, _ localize: Localizer) throws(ClientConfigurationError) -> [UInt8] {
        switch BoundedFile.read(path, limit: 1 << 20) {
        case .success(let bytes): return bytes
        case .failure(let problem): throw ClientConfigurationError(TextTemplate.fill(failing, path, problem.sentence(localize)), key: key)
        }
    }

    /// A private key others can read (but the system service's group, 0640
    /// root:ccrelay) is refused, with the command that fixes it.
    private static func checkPrivate(_ path: String, key: String, _ localize: Localizer) throws(ClientConfigurationError) {
        guard BoundedFile.mode(path) != nil else {
            let reason = SystemError.reason(errno)
            throw ClientConfigurationError(TextTemplate.fill(localize("cannot read private key %s: %s"), path, reason), key: key)
        }
        if let problem = SecretFileMode.problem(path, called: TextTemplate.fill(localize("private key %s"), path), localize: localize) {
            throw ClientConfigurationError(problem, key: key)
        }
    }

    private static func parsePEM(_ bytes: [UInt8], path: String, _ localize: Localizer) throws(ClientConfigurationError) -> OpaquePointer {
        let x509 = bytes.withUnsafeBytes { raw -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_X509(bio, nil, refusePassphrase, nil)
        }
        guard let x509 else {
            ERR_clear_error()
            throw ClientConfigurationError(TextTemplate.fill(localize("certificate %s is not a PEM certificate"), path), key: "auth.certificate")
        }
        return x509
    }

    /// The private key of a PEM file; an encrypted one is refused with the
    /// command that removes the passphrase (nothing may prompt for it).
    private static func parseKey(_ bytes: [UInt8], path: String, passphrase: String?, configKey: String, _ localize: Localizer)
        throws(ClientConfigurationError) -> OpaquePointer
    {
        let encrypted = bytes.contains(subsequence: Array("ENCRYPTED".utf8))
        if encrypted && passphrase == nil {
            throw ClientConfigurationError(
                TextTemplate.fill(
                    localize("private key %s is protected by a passphrase, which ccrelay cannot ask for; remove it with: openssl pkey -in %s -out %s.plain && chmod 600 %s.plain, and set [auth] key to that file"),
                    path, path, path, path),
                key: configKey)
        }
        let parsed = bytes.withUnsafeBytes { raw -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            guard let passphrase else { return PEM_read_bio_PrivateKey(bio, nil, refusePassphrase, nil) }
            return passphrase.withCString { text in
                PEM_read_bio_PrivateKey(bio, nil, nil, UnsafeMutableRawPointer(mutating: text))
            }
        }
        guard let parsed else {
            ERR_clear_error()
            throw ClientConfigurationError(
                TextTemplate.fill(
                    encrypted
                        ? localize("private key %s cannot be opened with its passphrase")
                        : localize("%s holds no PEM private key (-----BEGIN PRIVATE KEY-----); set [auth] key to the file that has the key"),
                    path),
                key: configKey)
        }
        return parsed
    }

    private static func parsePKCS12(_ bytes: [UInt8], path: String, passphrase: String?, _ localize: Localizer) throws(ClientConfigurationError)
        -> (OpaquePointer, OpaquePointer)
    {
        var isBundle = false
        let parsed = bytes.withUnsafeBytes { raw -> (OpaquePointer, OpaquePointer)? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            guard let bundle = d2i_PKCS12_bio(bio, nil) else { return nil }
            isBundle = true
            defer { PKCS12_free(bundle) }
            var key: OpaquePointer?
            var certificate: OpaquePointer?
            guard PKCS12_parse(bundle, passphrase ?? "", &key, &certificate, nil) == 1, let key, let certificate else {
                EVP_PKEY_free(key)
                X509_free(certificate)
                return nil
            }
            return (certificate, key)
        }
        ERR_clear_error()
        guard let parsed else {
            throw ClientConfigurationError(
                !isBundle
                    ? TextTemplate.fill(localize("certificate %s is not a PKCS#12 bundle (or it holds no key and certificate)"), path)
                    : passphrase == nil
                        ? TextTemplate.fill(
                            localize("PKCS#12 bundle %s is protected by a password, and the keyring has none for it; save it with: ccrelay setup --certificate %s --p12-password-stdin --force (it goes to the keyring, never into a file). Where no keyring (Secret Service) runs that fails too: install one (sudo apt install gnome-keyring, then log in again), or make PEM files of it, which need no password: %s"),
                            path, path, PKCS12Conversion.commands(path).joined(separator: "; "))
                        : keyringPasswordRefused(path, localize: localize).message,
                key: "auth.certificate")
        }
        return parsed
    }

    /// The refusal of a PKCS#12 bundle at `path` that its password does not open
    /// (the keyring's, as the daemon reads it); setup's trial tells it apart by
    /// equality (with the `localize` its check had).
    public static func keyringPasswordRefused(_ path: String, localize: Localizer) -> ClientConfigurationError {
        ClientConfigurationError(
            TextTemplate.fill(
                localize("PKCS#12 bundle %s cannot be opened with the password in the keyring; save the right one with: ccrelay setup --certificate %s --p12-password-stdin --force"),
                path, path),
            key: "auth.certificate")
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

/// OpenSSL's passphrase callback that never prompts: without it, OpenSSL
/// asks on the terminal ("Enter PEM pass phrase:"), and under systemd it
/// would wait or fail silently.
private let refusePassphrase: @convention(c) (UnsafeMutablePointer<CChar>?, Int32, Int32, UnsafeMutableRawPointer?) -> Int32 = {
    _, _, _, _ in 0
}
