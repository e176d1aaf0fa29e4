import CDBus
import EventLoop

/// The bus a `Connection` talks to.
public enum Bus: Sendable, Hashable {
    /// `DBUS_SESSION_BUS_ADDRESS`: the user's desktop session.
    case session
    /// `DBUS_SYSTEM_BUS_ADDRESS` or the well-known system socket.
    case system
    /// A bus at an explicit address, such as a private test bus.
    case address(String)
}

/// A connection to a message bus, driven by one `EventScheduler` (the
/// daemon's `EventLoop`; a dispatch queue on the command line).
///
/// Confinement (why `@unchecked Sendable` is sound here): every mutable
/// property and every libdbus call on `raw` is used only on `loop`. Methods
/// marked "on `loop`" check it with `dispatchPrecondition`; the `async`
/// methods hop onto the loop themselves. Handlers are always called on `loop`.
public final class Connection: @unchecked Sendable {
    /// The loop that owns this connection; all handlers run on it.
    public let loop: any EventScheduler
    /// This connection's unique name on the bus, such as `:1.42`.
    public let uniqueName: String
    /// Called on `loop` once when the bus connection is lost.
    public var onDisconnect: (() -> Void)?

    let raw: OpaquePointer
    private let context: CallbackContext
    public private(set) var isConnected = true

    var subscriptions: [UInt64: SignalSubscription] = [:]
    var matchRuleUsers: [String: Int] = [:]
    var nameOwners: [String: NameOwnerEntry] = [:]
    var nameWatchers: [UInt64: String] = [:]
    var objects: [ObjectPath: [String: Interface]] = [:]
    private var nextTokenValue: UInt64 = 1

    /// Connects and registers on `bus` (blocking until the bus says hello), then
    /// hands the connection's file descriptors and timeouts to `loop`.
    /// May be called on any thread, `loop`'s included.
    public convenience init(bus: Bus, loop: any EventScheduler) throws(DBusError) {
        let raw = try Connection.open(bus)
        self.init(raw: raw, loop: loop)
        loop.sync { attachToLoop() }
    }

    private init(raw: OpaquePointer, loop: any EventScheduler) {
        self.raw = raw
        self.loop = loop
        uniqueName = dbus_bus_get_unique_name(raw).map { String(cString: $0) } ?? ""
        context = CallbackContext(loop: loop)
        context.connection = self
    }

    private static func open(_ bus: Bus) throws(DBusError) -> OpaquePointer {
        dbus_threads_init_default()
        let raw: OpaquePointer?
        switch bus {
        case .session: raw = try withCError { dbus_bus_get_private(DBUS_BUS_SESSION, $0) }
        case .system: raw = try withCError { dbus_bus_get_private(DBUS_BUS_SYSTEM, $0) }
        case .address(let address):
            let opened = try withCError { dbus_connection_open_private(address, $0) }
            guard let opened else { throw DBusError(.failed, "cannot connect to \(address)") }
            do {
                _ = try withCError { dbus_bus_register(opened, $0) }
            } catch {
                dbus_connection_close(opened)
                dbus_connection_unref(opened)
                throw error
            }
            raw = opened
        }
        guard let raw else { throw DBusError(.failed, "cannot connect to the \(bus) bus") }
        // A lost bus is the daemon's to handle, never a reason for libdbus to exit the process.
        dbus_connection_set_exit_on_disconnect(raw, 0)
        return raw
    }

    deinit {
        // libdbus's callbacks run on `loop`; tear down there so none is in flight.
        let teardown = { [raw, isConnected] in
            if isConnected { dbus_connection_close(raw) }
            dbus_connection_unref(raw)
        }
        loop.sync(teardown)
    }

    /// Closes the connection (on `loop`). Pending calls fail with `.disconnected`;
    /// `onDisconnect` is not called for a close the program asked for.
    public func close() {
        loop.preconditionIsCurrent("a D-Bus connection")
        guard isConnected else { return }
        isConnected = false
        onDisconnect = nil
        dbus_connection_close(raw)
        detachFromLoop()
    }

    /// Retains the callback context once more for one libdbus registration.
    func contextRetained() -> UnsafeMutableRawPointer { context.retained() }
    /// The context's address, which identifies the filter to libdbus.
    var contextIdentity: UnsafeMutableRawPointer { Unmanaged.passUnretained(context).toOpaque() }

    func nextToken() -> UInt64 {
        defer { nextTokenValue += 1 }
        return nextTokenValue
    }

    // MARK: Sending

    /// Sends a message that expects no reply (a signal, a reply, or a call with
    /// `noReplyExpected`), on `loop`. Returns its serial.
    @discardableResult
    public func send(_ message: Message) throws(DBusError) -> UInt32 {
        loop.preconditionIsCurrent("a D-Bus connection")
        guard isConnected else { throw DBusError(.disconnected, "the bus connection is closed") }
        let rawMessage = try message.makeRaw()
        defer { dbus_message_unref(rawMessage) }
        var serial: UInt32 = 0
        guard dbus_connection_send(raw, rawMessage, &serial) != 0 else {
            throw DBusError(.noMemory, "out of memory sending a message")
        }
        return serial
    }

    /// Calls a method (on `loop`); `completion` runs on `loop` with the reply,
    /// or with the error the peer, the bus or the timeout produced. When the
    /// call cannot be sent at all, `completion` runs before this returns.
    public func call(
        _ message: Message, timeout: Duration = .seconds(25),
        completion: @escaping (Result<Message, DBusError>) -> Void
    ) {
        loop.preconditionIsCurrent("a D-Bus connection")
        let failEarly = { (error: DBusError) in completion(.failure(error)) }
        guard isConnected else { return failEarly(DBusError(.disconnected, "the bus connection is closed")) }
        let rawMessage: OpaquePointer
        do { rawMessage = try message.makeRaw() } catch { return failEarly(error) }
        defer { dbus_message_unref(rawMessage) }
        let milliseconds = Int32(clamping: timeout.components.seconds * 1000
            + timeout.components.attoseconds / 1_000_000_000_000_000)
        var pending: OpaquePointer?
        guard dbus_connection_send_with_reply(raw, rawMessage, &pending, max(milliseconds, 1)) != 0 else {
            return failEarly(DBusError(.noMemory, "out of memory sending a call"))
        }
        guard let pending else {
            return failEarly(DBusError(.disconnected, "the bus connection is closed"))
        }
        // Ownership: the box is retained here and released by libdbus through
        // `releaseBox` when the pending call is finalised; our reference to the
        // pending call itself is dropped in `pendingCallNotify`.
        let box = Unmanaged.passRetained(PendingCallBox(completion)).toOpaque()
        if dbus_pending_call_set_notify(pending, pendingCallNotify, box, releasePendingBox) == 0 {
            Unmanaged<PendingCallBox>.fromOpaque(box).release()
            dbus_pending_call_cancel(pending)
            dbus_pending_call_unref(pending)
            failEarly(DBusError(.noMemory, "out of memory waiting for a reply"))
        }
    }

    // MARK: Incoming messages

    /// Handles every message libdbus dispatches; true when it was consumed.
    func handle(_ rawMessage: OpaquePointer) -> Bool {
        switch dbus_message_get_type(rawMessage) {
        case CDBUS_MESSAGE_TYPE_SIGNAL:
            if dbus_message_is_signal(rawMessage, "org.freedesktop.DBus.Local", "Disconnected") != 0 {
                handleDisconnect()
                return true
            }
            deliverSignal(rawMessage)
            return false
        case CDBUS_MESSAGE_TYPE_METHOD_CALL:
            return handleMethodCall(rawMessage)
        default:
            return false
        }
    }

    private func handleDisconnect() {
        guard isConnected else { return }
        isConnected = false
        detachFromLoop()
        let handler = onDisconnect
        onDisconnect = nil
        handler?()
    }

    /// Dispatches every message libdbus has queued (on `loop`).
    func dispatchQueued() {
        while isConnected, dbus_connection_dispatch(raw) == DBUS_DISPATCH_DATA_REMAINS {}
    }

    // MARK: The bus daemon

    /// How `RequestName` answered.
    public enum RequestNameReply: UInt32, Sendable {
        case primaryOwner = 1, inQueue = 2, exists = 3, alreadyOwner = 4
    }

    /// Flags for `requestName`.
    public struct NameFlags: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let allowReplacement = NameFlags(rawValue: CDBUS_NAME_FLAG_ALLOW_REPLACEMENT)
        public static let replaceExisting = NameFlags(rawValue: CDBUS_NAME_FLAG_REPLACE_EXISTING)
        public static let doNotQueue = NameFlags(rawValue: CDBUS_NAME_FLAG_DO_NOT_QUEUE)
    }

    static let busName = StandardNames.bus
    static let busPath = StandardNames.busPath

    /// Asks the bus for a well-known name; `completion` runs on `loop` (call this there).
    public func requestName(_ name: String, flags: NameFlags = [.doNotQueue],
                            completion: @escaping (Result<RequestNameReply, DBusError>) -> Void) {
        call(.methodCall(
            destination: Self.busName, path: Self.busPath, interface: Self.busName, member: "RequestName",
            body: [.string(name), .uint32(flags.rawValue)])
        ) { result in
            completion(result.flatMap { reply in
                do throws(DBusError) {
                    try reply.expect("u")
                    let code: UInt32 = try reply.argument(0)
                    guard let answer = RequestNameReply(rawValue: code) else {
                        throw DBusError(.invalidValue, "RequestName answered unknown code \(code)")
                    }
                    return .success(answer)
                } catch {
                    return .failure(error)
                }
            })
        }
    }

    /// The unique name owning `name`, or nil when nobody owns it; `completion`
    /// runs on `loop` (call this there).
    public func nameOwner(_ name: String, completion: @escaping (Result<String?, DBusError>) -> Void) {
        call(.methodCall(
            destination: Self.busName, path: Self.busPath, interface: Self.busName, member: "GetNameOwner",
            body: [.string(name)])
        ) { result in
            switch result {
            case .failure(let error) where error.name == .nameHasNoOwner: completion(.success(nil))
            case .failure(let error): completion(.failure(error))
            case .success(let reply):
                do throws(DBusError) {
                    try reply.expect("s")
                    completion(.success(try reply.argument(0, as: String.self)))
                } catch {
                    completion(.failure(error))
                }
            }
        }
    }
}

/// The context handed to connection-wide libdbus callbacks.
///
/// Ownership: each registration (watch, timeout, dispatch-status and filter
/// functions) retains it once with `Unmanaged.passRetained` and libdbus releases
/// it through `releaseContext` when the functions are replaced or the
/// connection is finalised. It holds the connection weakly, so a callback that
/// outlives the Swift object does nothing.
final class CallbackContext: @unchecked Sendable {
    // Guard: `connection` is written once before any callback is registered.
    weak var connection: Connection?
    let loop: any EventScheduler
    init(loop: any EventScheduler) { self.loop = loop }

    func retained() -> UnsafeMutableRawPointer { Unmanaged.passRetained(self).toOpaque() }
    static func from(_ pointer: UnsafeMutableRawPointer?) -> CallbackContext {
        Unmanaged<CallbackContext>.fromOpaque(pointer!).takeUnretainedValue()
    }
}

let releaseContext: DBusFreeFunction = { pointer in
    Unmanaged<CallbackContext>.fromOpaque(pointer!).release()
}

/// Holds a call's completion until its reply arrives.
final class PendingCallBox {
    let completion: (Result<Message, DBusError>) -> Void
    init(_ completion: @escaping (Result<Message, DBusError>) -> Void) { self.completion = completion }
}

let releasePendingBox: DBusFreeFunction = { pointer in
    Unmanaged<PendingCallBox>.fromOpaque(pointer!).release()
}

let pendingCallNotify: DBusPendingCallNotifyFunction = { pending, pointer in
    let box = Unmanaged<PendingCallBox>.fromOpaque(pointer!).takeUnretainedValue()
    let result: Result<Message, DBusError>
    if let reply = dbus_pending_call_steal_reply(pending) {
        let message = Message(reading: reply)
        dbus_message_unref(reply)
        result = message.kind == .error ? .failure(message.asError) : .success(message)
    } else {
        result = .failure(DBusError(.noReply, "no reply"))
    }
    box.completion(result)
    dbus_pending_call_unref(pending)
}
