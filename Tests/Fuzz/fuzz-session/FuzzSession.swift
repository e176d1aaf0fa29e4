import CCRelayCore
import CoreVocabulary

// libFuzzer target: `Session` driven by an event sequence decoded from the
// input (events, server answers with any numbers, time steps), checking
// its invariants after every step: one request in flight at most, a
// keep-alive's timeout within the time left and the protocol's request
// bound (15 s for CC/1, 60 s for a Srun portal), a timer armed whenever
// a request is due, state and deadline consistent.

struct Reader {
    var bytes: [UInt8]
    var index = 0
    mutating func byte() -> UInt8? {
        guard index < bytes.count else { return nil }
        defer { index += 1 }
        return bytes[index]
    }
    mutating func number() -> Int {
        let kinds = [0, 1, 2, 5, 8, 60, 180, 3600, 86_400, 86_401, -1, Int.max, Int.min]
        return kinds[Int(byte() ?? 0) % kinds.count]
    }
}

func loginAnswer(_ reader: inout Reader) -> LoginAnswer {
    switch (reader.byte() ?? 0) % 7 {
    case 0, 1: .loggedIn(interval: reader.number(), timeout: reader.number(), notices: [])
    case 2: .refused(.certificateRejected, message: nil)
    case 3: .rateLimited(retryAfter: reader.number())
    case 4: .noNetwork
    case 5: .blocked(.captchaRequired, message: nil, retryAfter: reader.number())
    default: .untrusted(.unknownIssuer)
    }
}

func keepAliveAnswer(_ reader: inout Reader) -> KeepAliveAnswer {
    switch (reader.byte() ?? 0) % 9 {
    case 0, 1: .accepted(interval: reader.number(), timeout: reader.number(), notices: [])
    case 2: .accepted(interval: nil, timeout: nil, notices: [NoticeInfo(id: "n\(reader.byte() ?? 0)", title: "t", body: "b", urgency: .normal)])
    case 3: .loggedOut(reason: ["expired", "kicked", "portal_ended"][Int(reader.byte() ?? 0) % 3], message: nil)
    case 4: .refused(.certificateRejected, message: nil)
    case 5: .rateLimited(retryAfter: reader.number())
    case 6: .noNetwork
    case 7: .untrusted(.unknownIssuer)
    default: .transientFailure("503")
    }
}

/// The one-input entry libFuzzer\'s own main looks for; the target\'s main.swift runs the loop with it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSession(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    var reader = Reader(bytes: Array(UnsafeBufferPointer(start: data, count: size)))
    // An odd first byte: a Srun portal's session (it logs in again after the portal ends it, until a fight).
    var settings = SessionSettings()
    if (reader.byte() ?? 0) % 2 == 1 {
        settings.reloginAfterServerEnd = .seconds(3)
        settings.requestTimeout = .seconds(60)
    }
    var session = Session(settings: settings)
    var now = Instant(sinceBoot: .seconds(1_000))
    var timer: Instant?
    var inFlight: SessionEffect?
    while let code = reader.byte() {
        let event: SessionEvent
        switch code % 12 {
        case 0: event = .start
        case 1: event = .logout
        case 2:
            // Time passes; the timer fires if it is due.
            now = now + .milliseconds(Int64(reader.byte() ?? 0) * 250)
            guard let due = timer, due <= now else { continue }
            timer = nil
            event = .timerFired
        case 3: event = .loginAnswered(loginAnswer(&reader))
        case 4: event = .keepAliveAnswered(keepAliveAnswer(&reader))
        case 5: event = .sleeping
        case 6: event = .resumed
        case 7: event = .connectivity(online: false)
        case 8: event = .connectivity(online: true)
        case 9: event = .restore(RestoredSession(interval: reader.number(), timeout: reader.number(),
                                                 remaining: .seconds(Int64(reader.byte() ?? 0)), seq: UInt64(reader.byte() ?? 0)))
        case 10:
            // The request in flight is answered the way it was asked.
            guard let request = inFlight else { continue }
            if case .sendLogin = request { event = .loginAnswered(loginAnswer(&reader)) } else { event = .keepAliveAnswered(keepAliveAnswer(&reader)) }
        default: event = .stop
        }
        let effects = session.handle(event, at: now)
        var requests = 0
        for effect in effects {
            switch effect {
            case .armTimer(let at): timer = at
            case .cancelTimer: timer = nil
            case .sendLogin:
                requests += 1
                inFlight = effect
            case .sendKeepAlive(_, let timeout):
                requests += 1
                inFlight = effect
                precondition(timeout > .zero && timeout <= settings.requestTimeout, "a keep-alive's timeout is bounded")
                if let remaining = session.remaining(at: now) { precondition(timeout <= max(remaining, .seconds(1))) }
            default: break
            }
        }
        precondition(requests <= 1, "one request at a time")
        if case .loginAnswered = event { if case .sendLogin = inFlight, requests == 0 { inFlight = nil } }
        if case .keepAliveAnswered = event { if case .sendKeepAlive = inFlight, requests == 0 { inFlight = nil } }
        if case .stop = event { inFlight = nil }
        precondition(session.interval >= .milliseconds(333) && session.interval <= .seconds(3600))
        precondition(session.timeout >= .seconds(1) && session.timeout <= .seconds(86_400))
        if let remaining = session.remaining(at: now) { precondition(remaining <= session.timeout) }
        if session.state == .online || session.state == .failing { precondition(session.deadline != nil) }
        if let next = session.nextAttempt(at: now), next > .zero, session.state != .sleeping {
            precondition(timer != nil, "a planned request has its timer")
        }
    }
    return 0
}
