import Foundation

/// Certificates made with `openssl` for one test run: a campus CA, a server
/// certificate for 127.0.0.1, student certificates (good, expired, from
/// another CA, as PKCS#12, with the key inside the PEM), and key pins.
public final class TestPKI: Sendable {
    public let directory: String

    public var caCertificate: String { path("ca.pem") }
    public var serverCertificate: String { path("server.pem") }
    public var serverKey: String { path("server.key") }
    public var clientCertificate: String { path("client.pem") }
    public var clientKey: String { path("client.key") }
    /// Certificate and key in one PEM file.
    public var clientCombined: String { path("client-combined.pem") }
    /// PKCS#12 bundle with passphrase `pkcs12Passphrase`.
    public var clientPKCS12: String { path("client.p12") }
    public let pkcs12Passphrase = "correct horse"
    public var expiredCertificate: String { path("expired.pem") }
    public var expiredKey: String { path("expired.key") }
    /// Valid for 3 more days: inside the 7-day warning window.
    public var expiringCertificate: String { path("expiring.pem") }
    public var expiringKey: String { path("expiring.key") }
    /// Issued by another CA than the one the server trusts.
    public var strangerCertificate: String { path("stranger.pem") }
    public var strangerKey: String { path("stranger.key") }
    /// Valid only from 2099: "not yet valid".
    public var futureCertificate: String { path("future.pem") }
    public var futureKey: String { path("future.key") }
    /// The student key, encrypted with passphrase "secret".
    public var encryptedKey: String { path("encrypted.key") }
    /// Server certificates for 127.0.0.1 that a client must not trust: for
    /// another name, expired, and self-signed.
    public var wrongNameServerCertificate: String { path("wrongname.pem") }
    public var wrongNameServerKey: String { path("wrongname.key") }
    public var expiredServerCertificate: String { path("expiredserver.pem") }
    public var expiredServerKey: String { path("expiredserver.key") }
    public var selfSignedServerCertificate: String { path("selfsigned.pem") }
    public var selfSignedServerKey: String { path("selfsigned.key") }
    /// The server certificate of the network-namespace tests: ccsim.test and 10.231.0.1.
    public var netServerCertificate: String { path("netserver.pem") }
    public var netServerKey: String { path("netserver.key") }
    /// `sha256//…` pin of the server's public key.
    public let serverPin: String
    /// A well-formed pin of some other key.
    public let otherPin: String

    /// The PKI of this test process, made once.
    public static let shared: TestPKI = {
        do { return try TestPKI() } catch { fatalError("cannot make test certificates: \(error)") }
    }()

    private func path(_ name: String) -> String { directory + "/" + name }

    private init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-pki-\(getpid())").path
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let dir = directory
        func openssl(_ arguments: [String]) throws {
            let result = try run("/usr/bin/openssl", arguments)
            guard result.status == 0 else { throw TestSetupError("openssl \(arguments.joined(separator: " ")): \(result.standardError)") }
        }
        func key(_ name: String) throws {
            try openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "\(dir)/\(name).key"])
            chmod("\(dir)/\(name).key", 0o600)
        }
        func selfSigned(_ name: String, _ subject: String) throws {
            try key(name)
            try openssl(["req", "-x509", "-new", "-key", "\(dir)/\(name).key", "-subj", subject, "-days", "30",
                         "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
                         "-out", "\(dir)/\(name).pem"])
        }
        func issued(_ name: String, _ subject: String, by ca: String, extensions: String, start: String? = nil, end: String? = nil,
                    days: Int = 30) throws {
            try key(name)
            try openssl(["req", "-new", "-key", "\(dir)/\(name).key", "-subj", subject, "-out", "\(dir)/\(name).csr"])
            try "\(extensions)\n".write(toFile: "\(dir)/\(name).ext", atomically: true, encoding: .utf8)
            if let start, let end {
                // `openssl ca` is the one command of OpenSSL 3.0 that sets arbitrary validity dates.
                try "".write(toFile: "\(dir)/index.txt", atomically: true, encoding: .utf8)
                try """
                    [ca]
                    default_ca = test
                    [test]
                    database = \(dir)/index.txt
                    new_certs_dir = \(dir)
                    serial = \(dir)/serial
                    default_md = sha256
                    policy = anything
                    unique_subject = no
                    [anything]
                    commonName = supplied
                    """.write(toFile: "\(dir)/ca.cnf", atomically: true, encoding: .utf8)
                try "1000\n".write(toFile: "\(dir)/serial", atomically: true, encoding: .utf8)
                try openssl(["ca", "-batch", "-config", "\(dir)/ca.cnf", "-cert", "\(dir)/\(ca).pem", "-keyfile", "\(dir)/\(ca).key",
                             "-startdate", start, "-enddate", end, "-extfile", "\(dir)/\(name).ext", "-notext",
                             "-in", "\(dir)/\(name).csr", "-out", "\(dir)/\(name).pem"])
            } else {
                try openssl(["x509", "-req", "-in", "\(dir)/\(name).csr", "-CA", "\(dir)/\(ca).pem", "-CAkey", "\(dir)/\(ca).key",
                             "-CAcreateserial", "-days", String(days), "-extfile", "\(dir)/\(name).ext", "-out", "\(dir)/\(name).pem"])
            }
        }
        try selfSigned("ca", "/O=Campus/CN=Campus Test CA")
        try selfSigned("otherca", "/O=Elsewhere/CN=Other CA")
        try issued("server", "/CN=localhost", by: "ca",
                   extensions: "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth")
        try issued("client", "/O=Campus/CN=20231234", by: "ca", extensions: "extendedKeyUsage=clientAuth")
        try issued("expiring", "/O=Campus/CN=20230002", by: "ca", extensions: "extendedKeyUsage=clientAuth", days: 3)
        try issued("stranger", "/O=Elsewhere/CN=20239999", by: "otherca", extensions: "extendedKeyUsage=clientAuth")
        try issued("expired", "/O=Campus/CN=20230001", by: "ca", extensions: "extendedKeyUsage=clientAuth",
                   start: "20200101000000Z", end: "20200201000000Z")
        try issued("future", "/O=Campus/CN=20230003", by: "ca", extensions: "extendedKeyUsage=clientAuth",
                   start: "20990101000000Z", end: "20991231000000Z")
        try issued("wrongname", "/CN=other.example", by: "ca",
                   extensions: "subjectAltName=DNS:other.example\nextendedKeyUsage=serverAuth")
        try issued("expiredserver", "/CN=localhost", by: "ca",
                   extensions: "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth",
                   start: "20200101000000Z", end: "20200201000000Z")
        try issued("netserver", "/CN=ccsim.test", by: "ca",
                   extensions: "subjectAltName=DNS:ccsim.test,IP:10.231.0.1\nextendedKeyUsage=serverAuth")
        try key("selfsigned")
        try openssl(["req", "-x509", "-new", "-key", "\(dir)/selfsigned.key", "-subj", "/CN=localhost", "-days", "30",
                     "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-out", "\(dir)/selfsigned.pem"])
        try openssl(["pkey", "-in", "\(dir)/client.key", "-aes256", "-passout", "pass:secret", "-out", "\(dir)/encrypted.key"])
        chmod("\(dir)/encrypted.key", 0o600)
        let combined = try String(contentsOfFile: "\(dir)/client.pem", encoding: .utf8)
            + String(contentsOfFile: "\(dir)/client.key", encoding: .utf8)
        try combined.write(toFile: "\(dir)/client-combined.pem", atomically: true, encoding: .utf8)
        chmod("\(dir)/client-combined.pem", 0o600)
        try openssl(["pkcs12", "-export", "-in", "\(dir)/client.pem", "-inkey", "\(dir)/client.key",
                     "-out", "\(dir)/client.p12", "-passout", "pass:\(pkcs12Passphrase)"])
        chmod("\(dir)/client.p12", 0o600)
        func pin(_ certificate: String) throws -> String {
            let script = "openssl x509 -in '\(certificate)' -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64"
            let result = try run("/bin/sh", ["-c", script])
            guard result.status == 0 else { throw TestSetupError("pin: \(result.standardError)") }
            return "sha256//" + result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        serverPin = try pin("\(dir)/server.pem")
        otherPin = try pin("\(dir)/otherca.pem")
    }
}
