import CMicroHTTPD
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A request as the simulator's handlers see it.
struct HTTPRequest: Sendable {
    var method: String
    /// The path as MHD decoded it (for an absolute-form target, the whole URL without its query).
    var path: String
    /// The request target exactly as sent: `/a?b=c`, or `http://host/a?b=c` to a proxy.
    var target: String
    /// The Host header, if any.
    var host: String?
    var authorization: String?
    var userAgent: String?
    var body: [UInt8]
    var peer: String
    var bodyTooLarge: Bool
    var clientCertificate: ClientCertificate
}

/// What the TLS handshake learned of the client's certificate.
enum ClientCertificate: Sendable, Equatable {
    case plainConnection
    case none
    case verified(commonName: String)
    case rejected(expired: Bool, commonName: String)
}

/// How to answer a request, including the faults the simulator injects.
enum HTTPReply: Sendable {
    case respond(status: UInt32, headers: [(String, String)], body: [UInt8])
    /// Answer after a delay (a slow server).
    case delayed(milliseconds: Int, status: UInt32, headers: [(String, String)], body: [UInt8])
    /// Never answer (until the server stops).
    case hang
    /// Close the connection without an answer.
    case reset
}

/// An HTTP(S) server on libmicrohttpd, with one internal polling thread.
///
/// Ownership: the server passes itself unretained as the context of MHD's
/// callbacks; `stop()` (called by `deinit` at the latest) stops the MHD
/// daemon before the object goes away. Each request's `RequestContext` is
/// retained into MHD's per-request pointer and released when MHD reports the
/// request complete.
final class HTTPServer: Sendable {
    typealias Handler = @Sendable (HTTPRequest) -> HTTPReply

    struct TLSFiles: Sendable {
        var certificatePEM: String
        var keyPEM: String
        /// CA that client certificates are checked against; nil: none asked.
        var clientCAPEM: String?
    }

    /// The port bound (the one asked for, or the one the system chose for 0).
    var port: UInt16 { boundPort.load(ordering: .relaxed) }
    private let boundPort = Atomic<UInt16>(0)
    private let handler: Handler
    private let daemon: Mutex<DaemonHandle?> = Mutex(nil)
    private let suspended: Mutex<[SuspendedConnection]> = Mutex([])
    /// Connections accepted so far (each TCP connection once).
    let connectionsAccepted = Atomic<Int>(0)
    let requestsHandled = Atomic<Int>(0)

    init(address: String, port: UInt16, tls: TLSFiles?, handler: @escaping Handler) throws(SimulatorError) {
        self.handler = handler
        var socketAddress = sockaddr_in()
        socketAddress.sin_family = sa_family_t(AF_INET)
        socketAddress.sin_port = port.bigEndian
        guard inet_pton(AF_INET, address, &socketAddress.sin_addr) == 1 else {
            throw SimulatorError("'\(address)' is not an IPv4 address")
        }
        let flags = UInt32(MHD_USE_AUTO_INTERNAL_THREAD.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue | MHD_USE_ERROR_LOG.rawValue)
        let context = Unmanaged.passUnretained(self).toOpaque()
        let started = withUnsafePointer(to: &socketAddress) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                cmhd_start(flags, address, accessHandler, context, requestCompleted, nil, connectionNotify, context,
                           requestStarted, nil, tls?.keyPEM, tls?.certificatePEM, tls?.clientCAPEM)
            }
        }
        guard let started else {
            throw SimulatorError("cannot listen on \(address):\(port) (in use, or a bad TLS certificate or key)")
        }
        boundPort.store(cmhd_bound_port(started), ordering: .relaxed)
        let handle = DaemonHandle(pointer: started)
        daemon.withLock { $0 = handle }
    }

    deinit { stop() }

    /// Answers every hung or delayed request by closing it, then stops.
    func stop() {
        let waiting = suspended.withLock { list in
            defer { list = [] }
            return list
        }
        for connection in waiting {
            connection.context.closeWhenResumed = true
            MHD_resume_connection(connection.pointer)
        }
        daemon.withLock { daemon in
            if let running = daemon { MHD_stop_daemon(running.pointer) }
            daemon = nil
        }
    }

    fileprivate func handle(_ connection: OpaquePointer, _ url: String, _ method: String, _ context: RequestContext)
        -> MHD_Result
    {
        if context.closeWhenResumed { return .NO }
        if let pending = context.pendingReply {
            context.pendingReply = nil
            return queue(connection, pending.status, pending.headers, pending.body)
        }
        requestsHandled.add(1, ordering: .relaxed)
        let request = HTTPRequest(
            method: method, path: url, target: context.target ?? url, host: header(connection, "Host"), authorization: header(connection, "Authorization"),
            userAgent: header(connection, "User-Agent"), body: context.body,
            peer: peerAddress(connection), bodyTooLarge: context.tooLarge,
            clientCertificate: clientCertificate(connection))
        switch handler(request) {
        case .respond(let status, let headers, let body):
            return queue(connection, status, headers, body)
        case .reset:
            return .NO
        case .hang:
            suspend(connection, context)
            return .YES
        case .delayed(let milliseconds, let status, let headers, let body):
            context.pendingReply = (status, headers, body)
            suspend(connection, context)
            let resume = SuspendedConnection(pointer: connection, context: context)
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { [weak self] in
                guard let self else { return }
                let stillSuspended = self.suspended.withLock { list in
                    guard let index = list.firstIndex(where: { $0.pointer == resume.pointer }) else { return false }
                    list.remove(at: index)
                    return true
                }
                if stillSuspended { MHD_resume_connection(resume.pointer) }
            }
            return .YES
        }
    }

    private func suspend(_ connection: OpaquePointer, _ context: RequestContext) {
        suspended.withLock { $0.append(SuspendedConnection(pointer: connection, context: context)) }
        MHD_suspend_connection(connection)
    }

    private func queue(_ connection: OpaquePointer, _ status: UInt32, _ headers: [(String, String)], _ body: [UInt8])
        -> MHD_Result
    {
        let response = body.withUnsafeBytes { raw in
            MHD_create_response_from_buffer(raw.count, UnsafeMutableRawPointer(mutating: raw.baseAddress), .RESPMEM_MUST_COPY)
        }
        guard let response else { return .NO }
        defer { MHD_destroy_response(response) }
        for (name, value) in headers { MHD_add_response_header(response, name, value) }
        return MHD_queue_response(connection, UInt32(status), response)
    }

    private func header(_ connection: OpaquePointer, _ name: String) -> String? {
        MHD_lookup_connection_value(connection, .HEADER_KIND, name).map { String(cString: $0) }
    }

    private func peerAddress(_ connection: OpaquePointer) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        cmhd_peer_address(connection, &buffer, socklen_t(buffer.count))
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    private func clientCertificate(_ connection: OpaquePointer) -> ClientCertificate {
        var status: UInt32 = 0
        var name = [CChar](repeating: 0, count: 256)
        let result = cmhd_verify_client(connection, &status, &name, name.count)
        let commonName = name.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        switch result {
        case 0: return .verified(commonName: commonName)
        case 1: return .none
        case 2: return .rejected(expired: status & cmhd_status_expired() != 0, commonName: commonName)
        default: return .plainConnection
        }
    }
}

/// The running MHD daemon.
struct DaemonHandle: @unchecked Sendable {
    // Guard: only used under `HTTPServer.daemon`'s lock.
    let pointer: OpaquePointer
}

/// A connection whose request waits (hang or delay).
struct SuspendedConnection: @unchecked Sendable {
    // Guard: MHD allows resuming from any thread; the pointer is resumed once,
    // by whoever removes it from `HTTPServer.suspended` under its lock.
    let pointer: OpaquePointer
    let context: RequestContext
}

/// Per-request state kept in MHD's request pointer.
final class RequestContext: @unchecked Sendable {
    // Guard: touched only on MHD's single polling thread, except
    // `closeWhenResumed`, which `stop()` sets before resuming the connection.
    static let bodyLimit = 64 * 1024
    /// The request target as sent (MHD's URI log callback).
    var target: String?
    /// Set by the access handler's first call (the headers), before any body.
    var headersSeen = false
    var body: [UInt8] = []
    var tooLarge = false
    var pendingReply: (status: UInt32, headers: [(String, String)], body: [UInt8])?
    var closeWhenResumed = false
}

/// A refusal to start or a bad option, said to the user.
struct SimulatorError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

private let accessHandler: MHD_AccessHandlerCallback = {
    context, connection, url, method, _, uploadData, uploadSize, requestPointer in
    guard let context, let connection, let requestPointer, let uploadSize else { return .NO }
    let server = Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
    // The URI log callback made the context; without one (it cannot fail), make it here.
    let stored = requestPointer.pointee ?? Unmanaged.passRetained(RequestContext()).toOpaque()
    requestPointer.pointee = stored
    let request = Unmanaged<RequestContext>.fromOpaque(stored).takeUnretainedValue()
    guard request.headersSeen else {
        request.headersSeen = true
        return .YES
    }
    if uploadSize.pointee > 0 {
        if let uploadData, request.body.count + uploadSize.pointee <= RequestContext.bodyLimit {
            uploadData.withMemoryRebound(to: UInt8.self, capacity: uploadSize.pointee) {
                request.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: uploadSize.pointee))
            }
        } else {
            request.tooLarge = true
        }
        uploadSize.pointee = 0
        return .YES
    }
    return server.handle(
        connection, url.map { String(cString: $0) } ?? "/", method.map { String(cString: $0) } ?? "GET", request)
}

/// MHD's URI log callback: the request's context is made here, holding the target as sent.
private let requestStarted: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, OpaquePointer?)
    -> UnsafeMutableRawPointer? = { _, uri, _ in
        let context = RequestContext()
        context.target = uri.map { String(cString: $0) }
        return Unmanaged.passRetained(context).toOpaque()
    }

private let requestCompleted: MHD_RequestCompletedCallback = { _, _, requestPointer, _ in
    guard let requestPointer, let stored = requestPointer.pointee else { return }
    Unmanaged<RequestContext>.fromOpaque(stored).release()
    requestPointer.pointee = nil
}

private let connectionNotify: MHD_NotifyConnectionCallback = { context, _, _, event in
    guard let context, event == .CONNECTION_NOTIFY_STARTED else { return }
    Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue().connectionsAccepted.add(1, ordering: .relaxed)
}
