import DBus
import EventLoop

/// The `Connection` calls awaited from any context, for the command line and
/// tests. The daemon does not depend on this module: it uses the completion
/// calls on its own loop, with no Swift concurrency.
extension Connection {
    /// Calls a method from any context and waits for the reply.
    public func call(_ message: Message, timeout: Duration = .seconds(25)) async throws(DBusError) -> Message {
        let result: Result<Message, DBusError> = await withCheckedContinuation { continuation in
            loop.execute { self.call(message, timeout: timeout) { continuation.resume(returning: $0) } }
        }
        return try result.get()
    }

    /// Runs `body` on `loop` from any context and returns its result.
    public func perform<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            loop.execute { continuation.resume(with: Result { try body() }) }
        }
    }

    /// Asks the bus for a well-known name, from any context.
    public func requestName(_ name: String, flags: NameFlags = [.doNotQueue]) async throws(DBusError)
        -> RequestNameReply
    {
        let result: Result<RequestNameReply, DBusError> = await withCheckedContinuation { continuation in
            loop.execute { self.requestName(name, flags: flags) { continuation.resume(returning: $0) } }
        }
        return try result.get()
    }

    /// Gives up a well-known name; true when this connection owned it.
    @discardableResult
    public func releaseName(_ name: String) async throws(DBusError) -> Bool {
        let reply = try await call(
            .methodCall(
                destination: StandardNames.bus, path: StandardNames.busPath, interface: StandardNames.bus, member: "ReleaseName",
                body: [.string(name)]))
        try reply.expect("u")
        return try reply.argument(0, as: UInt32.self) == 1
    }

    /// The unique name owning `name`, or nil when nobody owns it, from any context.
    public func nameOwner(_ name: String) async throws(DBusError) -> String? {
        let result: Result<String?, DBusError> = await withCheckedContinuation { continuation in
            loop.execute { self.nameOwner(name) { continuation.resume(returning: $0) } }
        }
        return try result.get()
    }
}
