@testable import CCProtocol
import CCurl
import Foundation
import CCRelayCore
import CurlTransport
import Testing
import CoreVocabulary

/// The reply classifier against hostile bodies and headers: every number
/// of any size, sign or type is bounded, a malformed notice is dropped and
/// the reply stands, a token that could inject a header is refused.
@Suite struct HostileReplyTests {
    static let token = "0123456789abcdef0123"

    func login(_ fields: String) -> Outcome {
        let body = #"{"session":"\#(Self.token)","ip":"10.0.0.1","location":"none",\#(fields)}"#
        return ReplyClassifier.classify(.login, status: 201, body: Array(body.utf8), retryAfterHeader: nil)
    }

    func keepAlive(_ body: String) -> Outcome { keepAlive(Array(body.utf8)) }

    func keepAlive(_ body: [UInt8]) -> Outcome {
        ReplyClassifier.classify(.keepAlive, status: 200, body: body, retryAfterHeader: nil)
    }

    @Test(arguments: [
        ("9223372036854775807", 3600, 86_400), ("-9223372036854775808", 1, 1), ("1e300", 3600, 86_400),
        ("-1e300", 1, 1), ("0", 1, 1), ("60.9", 60, 60), ("18446744073709551616", 3600, 86_400),
    ])
    func loginNumbersAreClampedIntoTheProtocolsBounds(number: String, interval: Int, timeout: Int) {
        guard case .loggedIn(let grant) = login(#""interval":\#(number),"timeout":\#(number)"#) else {
            Issue.record("a huge or odd number is bounded, not a broken reply")
            return
        }
        #expect(grant.interval == interval)
        #expect(grant.timeout == timeout)
    }

    @Test func numbersOfTheWrongTypeCountAsAbsent() {
        guard case .transportFailure(.protocolError) = login(#""interval":"60","timeout":180"#) else {
            Issue.record("a login without a usable interval is not CC/1")
            return
        }
        #expect(keepAlive(#"{"status":"online","interval":"soon","timeout":[1],"notices":[]}"#)
                == .accepted(KeepAliveGrant(interval: nil, timeout: nil, notices: [])))
    }

    @Test func retryAfterInHeaderOrBodyIsBoundedToTenMinutes() {
        func limited(_ header: String?, _ body: String = "{}") -> Outcome {
            ReplyClassifier.classify(.keepAlive, status: 429, body: Array(body.utf8), retryAfterHeader: header)
        }
        #expect(limited("9223372036854775807") == .rateLimited(retryAfter: 600))
        #expect(limited("99999999999999999999999") == .rateLimited(retryAfter: 600))
        #expect(limited(" 30\r\n") == .rateLimited(retryAfter: 30))
        #expect(limited("-5") == .rateLimited(retryAfter: nil))
        #expect(limited("Wed, 21 Oct 2026 07:28:00 GMT") == .rateLimited(retryAfter: nil))
        #expect(limited(nil, #"{"retry_after": 1e300}"#) == .rateLimited(retryAfter: 600))
        #expect(limited(nil, #"{"retry_after": -3}"#) == .rateLimited(retryAfter: 0))
        #expect(limited(nil, #"{"retry_after": "7"}"#) == .rateLimited(retryAfter: nil))
    }

    @Test func aMalformedNoticeIsDroppedAndTheReplyStands() {
        let body = #"""
            {"status":"online","interval":60,"timeout":180,"notices":[
              {"title":"no id"}, {"id":42,"title":"number id"}, {"id":"","title":"empty id"},
              {"id":"bad-text","title":"\ud800 lone surrogate"}, "not an object",
              {"id":"ok-1","title":7,"body":"title of another type","urgency":["x"]},
              {"id":"ok-2","title":"fine","body":"fine","urgency":"critical"}]}
            """#
        guard case .accepted(let grant) = keepAlive(body) else {
            Issue.record("the 200 must stay accepted")
            return
        }
        // A lone surrogate is either dropped with its notice or replaced: never a broken reply.
        let kept = grant.notices.filter { $0.id != "bad-text" }
        #expect(kept.map(\.id) == ["ok-1", "ok-2"])
        #expect(kept[0].title == "" && kept[0].urgency == "normal")
        #expect(kept[1].urgency == "critical")
        #expect(grant.droppedNotices + grant.notices.count == 7)
        #expect(grant.droppedNotices >= 4)
        guard case .accepted(let notArray) = keepAlive(#"{"status":"online","notices":{"id":"x"}}"#) else {
            Issue.record("notices that are not an array are dropped, the reply stands")
            return
        }
        #expect(notArray.notices.isEmpty && notArray.droppedNotices == 1)
    }

    @Test func aBodyThatIsNotJSONIsAProtocolErrorNeverATrap() {
        let deep = String(repeating: "[", count: 30_000) + String(repeating: "]", count: 30_000)
        let bodies: [[UInt8]] = [
            "", " ", "{", "[1,]", "{status:1}", #"{"status":"online"} {}"#, "'single'", "NaN",
            #"{"status":"online","notices":[\#(deep)]}"#, deep,
        ].map { Array($0.utf8) } + [
            [0x7B, 0x22, 0xFF, 0xFE, 0x22, 0x3A, 0x31, 0x7D],  // invalid UTF-8 in a name
        ]
        for body in bodies {
            guard case .transportFailure(.protocolError) = keepAlive(body) else {
                Issue.record("\(String(decoding: body.prefix(40), as: UTF8.self).debugDescription) is not CC/1")
                continue
            }
        }
        // What JSONDecoder reads leniently stays a well-formed, bounded reply.
        let tolerated: [[UInt8]] = [
            Array("\u{FEFF}{\"status\":\"online\"}".utf8), Array(#"{"status":"online",}"#.utf8),
            Array(#"{"status":"onl"#.utf8) + [0xC3] + Array(#""}"#.utf8),
        ]
        for body in tolerated {
            #expect(keepAlive(body) == .accepted(KeepAliveGrant(interval: nil, timeout: nil, notices: [])),
                    "\(String(decoding: body, as: UTF8.self).debugDescription)")
        }
    }

    @Test func theWorkPerReplyIsBounded() {
        let notices = (0..<3800).map { #"{"id":"\#($0)"}"# }.joined(separator: ",")
        guard case .accepted(let grant) = keepAlive(#"{"status":"online","notices":[\#(notices)]}"#) else {
            Issue.record("a reply with many notices is accepted")
            return
        }
        #expect(grant.notices.count == Wire.noticeLimit)
        #expect(grant.droppedNotices == 3800 - Wire.noticeLimit)
    }

    @Test(arguments: ["0123456789abcdef\r\nX-Injected: 1", "short", String(repeating: "a", count: 513), "01234567 89abcdef0"])
    func aTokenThatCouldInjectAHeaderIsRefused(token: String) throws {
        let body = try JSONSerialization.data(withJSONObject: ["session": token, "interval": 60, "timeout": 180])
        guard case .transportFailure(.protocolError) = ReplyClassifier.classify(.login, status: 201, body: Array(body), retryAfterHeader: nil)
        else {
            Issue.record("token \(token.debugDescription) must be refused")
            return
        }
    }

    @Test func serverTextIsBoundedAndTheAddressMustBePrintable() {
        let body = #"{"session":"\#(Self.token)","ip":"\u001b[31m10.0.0.1","interval":60,"timeout":180}"#
        guard case .loggedIn(let grant) = ReplyClassifier.classify(.login, status: 201, body: Array(body.utf8), retryAfterHeader: nil)
        else {
            Issue.record("login")
            return
        }
        #expect(grant.ip == "")
        let long = String(repeating: "长", count: 5000)
        let outcome = ReplyClassifier.classify(
            .keepAlive, status: 410, body: Array(#"{"status":"logged_out","reason":"\#(long)","message":"\#(long)"}"#.utf8),
            retryAfterHeader: nil)
        guard case .loggedOut(let reason, let message) = outcome else {
            Issue.record("a 410 is a logout")
            return
        }
        #expect(reason.count == 64 && message?.count == Notice.textLimit)
    }

    @Test(arguments: [
        ("OpenSSL SSL_read: OpenSSL/3.0.19: error:0A000418:SSL routines::tlsv1 alert unknown ca, errno 0", HandshakeRefusal.unknownAuthority),
        ("error:0A000415:SSL routines::sslv3 alert certificate expired", .expired),
        ("error:0A000414:SSL routines::sslv3 alert certificate revoked", .revoked),
        ("error:0A00045C:SSL routines::tlsv13 alert certificate required, errno 0", .required),
        ("error:0A000412:SSL routines::sslv3 alert bad certificate", .notAccepted),
        ("error:0A000410:SSL routines::sslv3 alert handshake failure", .notAccepted),
        ("error:0A000416:SSL routines::sslv3 alert certificate unknown", .notAccepted),
    ])
    func tlsAlertsAreTheCredentialProblemsTheyAre(detail: String, refusal: HandshakeRefusal) {
        for code in [CURLE_SSL_CONNECT_ERROR, CURLE_RECV_ERROR] {
            #expect(TransportFailure.classify(code, osErrno: 0, bodyOverflowed: false, detail: detail)
                    == .clientCertificateRefused(refusal, detail))
        }
    }

    @Test func aHandshakeFailureWithoutAnAlertIsALostConnection() {
        let detail = "OpenSSL/3.0.19: error:0A00010B:SSL routines::wrong version number"
        #expect(TransportFailure.classify(CURLE_SSL_CONNECT_ERROR, osErrno: 0, bodyOverflowed: false, detail: detail)
                == .connectionLost(detail))
        #expect(TransportFailure.classify(CURLE_WRITE_ERROR, osErrno: 0, bodyOverflowed: true, detail: "") == .replyTooLarge)
    }

    @Test func everyProblemHasASentenceAndAListedCode() {
        let failures: [TransportFailure] = [
            .noNetwork("x"), .connectionLost("x"), .timeout, .serverUntrusted(.unknownIssuer, "x"), .serverUntrusted(.pinMismatch, "x"),
            .clientCertificateRefused(.expired, "x"), .clientCertificateRefused(.unknownAuthority, "x"),
            .credentialFilesUnusable("x"), .replyTooLarge, .protocolError("x"),
        ]
        let outcomes: [Outcome] = failures.map { .transportFailure($0) } + [
            .loggedOut(reason: "kicked", message: "管理员"), .locationRequired(message: nil), .rateLimited(retryAfter: 1),
            .serverError(status: 503, message: nil),
        ] + [CredentialRefusal.certificateRejected, .badCredentials, .accountDisabled, .quotaExhausted, .onlineElsewhere]
            .map { .credentialsRefused($0, message: nil) }
        for outcome in outcomes {
            let problem = outcome.problem
            #expect(problem.map { ProblemReport.codes.contains($0.code.rawValue) } == true, "\(outcome)")
            #expect(problem.map { $0.sentence.first?.isUppercase == true && $0.sentence.count > 20 } == true, "\(outcome)")
            #expect(problem?.sentence.contains("(\"") == false, "no Swift enum dumps: \(outcome)")
        }
        #expect(Outcome.accepted(KeepAliveGrant(interval: nil, timeout: nil, notices: [])).problem == nil)
    }
}
