import CurlTransport
import CCProtocol
import CCProtocolAsync
import Foundation
import CCRelayCore
import TestSupport
import Testing
import CoreVocabulary

/// Where real mutual-TLS servers refuse a student certificate — in the
/// handshake, with a TLS alert (openssl s_server here, not ccsim) — and
/// servers the client must not trust. Each refusal becomes the credential
/// or trust problem it is, never a retry-forever "connection lost".
@Suite struct TLSRefusalTests {
    let pki = TestPKI.shared

    func login(_ server: TLSServerProcess, certificate: String?, key: String?, ca: String? = TestPKI.shared.caCertificate)
        async throws -> Outcome
    {
        let client = try CCClient(
            configuration: ServerConfiguration(url: server.url, caFile: ca, certificate: certificate, key: key),
            client: ClientInfo(version: "1.0.0"), loop: TestLoop.shared)
        return await client.login(device: "d").outcome
    }

    @Test(arguments: [true, false])
    func certificatesTheServerRefusesInTheHandshake(tls13: Bool) async throws {
        let server = try await TLSServerProcess(
            certificate: pki.serverCertificate, key: pki.serverKey, clientCA: pki.caCertificate, tls13: tls13)
        let cases: [(String, String?, HandshakeRefusal)] = [
            (pki.strangerCertificate, pki.strangerKey, .unknownAuthority),
            (pki.futureCertificate, pki.futureKey, .notAccepted),
        ]
        for (certificate, key, expected) in cases {
            let outcome = try await login(server, certificate: certificate, key: key)
            guard case .transportFailure(.clientCertificateRefused(let refusal, _)) = outcome else {
                Issue.record("\(certificate) over TLS \(tls13 ? "1.3" : "1.2"): \(outcome)")
                continue
            }
            if certificate == pki.futureCertificate {
                // OpenSSL's server says "certificate expired" or "bad certificate" for a certificate not valid yet.
                #expect([.expired, .notAccepted].contains(refusal), "not yet valid")
            } else {
                #expect(refusal == expected, "\(certificate)")
            }
        }
        let none = try await login(server, certificate: nil, key: nil)
        guard case .transportFailure(.clientCertificateRefused(let refusal, _)) = none else {
            Issue.record("no certificate: \(none)")
            return
        }
        #expect(refusal == (tls13 ? .required : .notAccepted))
    }

    @Test func serversTheClientMustNotTrust() async throws {
        let cases: [(String, String, String?, ServerTrustProblem)] = [
            (pki.wrongNameServerCertificate, pki.wrongNameServerKey, pki.caCertificate, .wrongName),
            (pki.expiredServerCertificate, pki.expiredServerKey, pki.caCertificate, .expired),
            (pki.selfSignedServerCertificate, pki.selfSignedServerKey, pki.caCertificate, .unknownIssuer),
            (pki.serverCertificate, pki.serverKey, nil, .unknownIssuer),
        ]
        for (certificate, key, ca, expected) in cases {
            let server = try await TLSServerProcess(certificate: certificate, key: key)
            let outcome = try await login(server, certificate: pki.clientCertificate, key: pki.clientKey, ca: ca)
            guard case .transportFailure(.serverUntrusted(let problem, _)) = outcome else {
                Issue.record("\(certificate): \(outcome)")
                continue
            }
            #expect(problem == expected, "\(certificate)")
        }
    }

    @Test func credentialFilesThatCannotWorkAreRefusedBeforeAnyRequest() throws {
        func refusal(certificate: String, key: String?, ca: String? = nil) -> ClientConfigurationError? {
            #expect(throws: ClientConfigurationError.self) {
                try CCClient.check(ServerConfiguration(url: "https://127.0.0.1/", caFile: ca, certificate: certificate, key: key), localize: .english)
            }
        }
        let mismatch = refusal(certificate: pki.clientCertificate, key: pki.strangerKey)
        #expect(mismatch?.message.contains("does not belong to certificate") == true && mismatch?.key == "auth.key")
        let certificateOnly = pki.directory + "/certificate-only.key"
        unlink(certificateOnly)
        try FileManager.default.copyItem(atPath: pki.caCertificate, toPath: certificateOnly)
        chmod(certificateOnly, 0o600)
        let certificateAsKey = refusal(certificate: pki.clientCertificate, key: certificateOnly)
        #expect(certificateAsKey?.message.contains("holds no PEM private key") == true)
        let encrypted = refusal(certificate: pki.clientCertificate, key: pki.encryptedKey)
        #expect(encrypted?.message.contains("openssl pkey -in \(pki.encryptedKey)") == true)
        let badCA = refusal(certificate: pki.clientCertificate, key: pki.clientKey, ca: pki.clientKey)
        #expect(badCA?.message.contains("holds no PEM certificate") == true && badCA?.key == "server.ca-file")
        let fifo = pki.directory + "/fifo.pem"
        unlink(fifo)
        mkfifo(fifo, 0o600)
        let blocking = refusal(certificate: fifo, key: pki.clientKey)
        #expect(blocking?.message.contains("a FIFO") == true, "a FIFO is refused without blocking")
        let directory = refusal(certificate: pki.directory, key: pki.clientKey)
        #expect(directory?.message.contains("a directory") == true)
        let p12 = refusal(certificate: pki.clientPKCS12, key: nil)
        #expect(p12?.message.contains("protected by a password") == true)
        for url in ["https://", "https://127.0.0.1:99999/", "http://127.0.0.1.evil.example/"] {
            #expect(throws: ClientConfigurationError.self, "\(url)") { try CCClient.check(ServerConfiguration(url: url), localize: .english) }
        }
        let interface = #expect(throws: ClientConfigurationError.self) {
            try CCClient.check(ServerConfiguration(url: "https://127.0.0.1/", interface: "nosuchif0"), localize: .english)
        }
        #expect(interface?.key == "server.interface")
    }
}
