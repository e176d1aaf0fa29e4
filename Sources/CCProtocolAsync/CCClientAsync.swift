import CCProtocol
import EventLoop
import CCRelayCore

/// The CC/1 exchanges awaited from any context, for tests and benchmarks; the
/// daemon uses the completion forms on its own loop.
extension CCClient {
    public func login(device: String, user: String? = nil, password: String? = nil, timeout: Duration? = nil) async
        -> Exchange
    {
        await withCheckedContinuation { continuation in
            loop.execute {
                self.login(device: device, user: user, password: password, timeout: timeout) { continuation.resume(returning: $0) }
            }
        }
    }

    public func keepAlive(session: String, seq: UInt64, location: LocationFix? = nil, timeout: Duration? = nil) async
        -> Exchange
    {
        await withCheckedContinuation { continuation in
            loop.execute {
                self.keepAlive(session: session, seq: seq, location: location, timeout: timeout) { continuation.resume(returning: $0) }
            }
        }
    }

    public func logout(session: String, timeout: Duration? = nil) async -> Exchange {
        await withCheckedContinuation { continuation in
            loop.execute { self.logout(session: session, timeout: timeout) { continuation.resume(returning: $0) } }
        }
    }

    public func dropConnection() async {
        await withCheckedContinuation { continuation in loop.execute { self.dropConnection { continuation.resume() } } }
    }
}
