import AlertJournal
import CCRelayCore
import CoreVocabulary

// libFuzzer target: the store's restore path. A saved session with any
// values (as a damaged or tampered alerts.db could hold) is either refused
// by its check or carried on by `Session` without a trap.

/// The one-input entry libFuzzer\'s own main looks for; the target\'s main.swift runs the loop with it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRestore(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard bytes.count >= 32 else { return 0 }
    func integer(_ offset: Int) -> Int64 {
        bytes[offset..<(offset + 8)].reduce(0) { $0 << 8 | Int64($1) }
    }
    let now = 1_800_000_000.0
    let snapshot = SessionSnapshot(
        server: "https://s/", account: "a", token: String(decoding: bytes[32...].prefix(600), as: UTF8.self),
        ip: String(decoding: bytes[24..<32], as: UTF8.self), interval: Int(integer(0)), timeout: Int(integer(8)),
        seq: UInt64(bitPattern: integer(16)), deadline: Double(bitPattern: UInt64(bitPattern: integer(24))))
    guard snapshot.problem(now: now) == nil else { return 0 }
    precondition(snapshot.deadline.isFinite && SessionToken.isValid(snapshot.token))
    var session = Session()
    let remaining = snapshot.deadline - now
    guard remaining > 1 else { return 0 }
    _ = session.handle(
        .restore(RestoredSession(interval: snapshot.interval, timeout: snapshot.timeout,
                                 remaining: .milliseconds(Int64(remaining * 1000)), seq: snapshot.seq)),
        at: Instant(sinceBoot: .seconds(10)))
    precondition(session.remaining(at: Instant(sinceBoot: .seconds(10)))! <= session.timeout)
    return 0
}
