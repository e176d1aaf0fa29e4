@testable import CCProtocol
import CCRelayCore
import CoreVocabulary
import CurlTransport

// libFuzzer target: the CC/1 reply classifier. Byte 0 picks the endpoint
// and HTTP status, byte 1 how many of the following bytes are the
// Retry-After header; the rest is the body. Every outcome must be within
// docs/protocol.md's bounds and survive the state machine.

let statuses = [200, 201, 204, 401, 403, 409, 410, 428, 429, 500, 503, 418]
let endpoints: [ReplyClassifier.Endpoint] = [.login, .keepAlive, .logout]

/// The one-input entry libFuzzer\'s own main looks for; the target\'s main.swift runs the loop with it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzReply(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard bytes.count >= 2 else { return 0 }
    let endpoint = endpoints[Int(bytes[0]) % endpoints.count]
    let status = statuses[Int(bytes[0] >> 2) % statuses.count]
    let headerLength = min(Int(bytes[1]) % 24, bytes.count - 2)
    let header = String(decoding: bytes[2..<(2 + headerLength)], as: UTF8.self)
    let body = Array(bytes[(2 + headerLength)...].prefix(ReplyClassifier.bodyLimit))
    let outcome = ReplyClassifier.classify(endpoint, status: status, body: body, retryAfterHeader: header)
    _ = outcome.problem
    var session = Session()
    let now = Instant(sinceBoot: .seconds(100))
    _ = session.handle(.start, at: now)
    switch outcome {
    case .loggedIn(let grant):
        precondition(ServerTiming.intervals.contains(grant.interval) && ServerTiming.timeouts.contains(grant.timeout))
        precondition(SessionToken.isValid(grant.session))
        precondition(grant.notices.count <= Wire.noticeLimit && grant.ip.utf8.count <= Wire.ipLimit)
        _ = session.handle(.loginAnswered(.loggedIn(interval: grant.interval, timeout: grant.timeout, notices: [])), at: now)
        precondition(session.deadline! > now)
    case .accepted(let grant):
        precondition(grant.interval.map(ServerTiming.intervals.contains) ?? true)
        precondition(grant.timeout.map(ServerTiming.timeouts.contains) ?? true)
        precondition(grant.notices.count <= Wire.noticeLimit)
        precondition(grant.notices.allSatisfy { !$0.id.isEmpty && $0.title.count <= Notice.textLimit && $0.body.count <= Notice.textLimit })
    case .rateLimited(let seconds):
        precondition(seconds.map(ServerTiming.retryAfters.contains) ?? true)
        _ = session.handle(.loginAnswered(.rateLimited(retryAfter: seconds)), at: now)
        precondition(session.nextAttempt(at: now)! <= .seconds(600))
    case .loggedOut(let reason, let message):
        precondition(reason.count <= 64 && (message?.count ?? 0) <= Notice.textLimit)
    default:
        break
    }
    // The TLS classifier reads libcurl's error text: any text at all.
    _ = TransportFailure.handshakeRefusal(String(decoding: body.prefix(200), as: UTF8.self))
    _ = TransportFailure.trustProblem(header)
    return 0
}
