import CCurl
import EventLoop

/// libcurl's multi interface driven by an `EventScheduler`: curl's sockets
/// become loop watches (`CURLMOPT_SOCKETFUNCTION`), its one timeout a loop
/// timer (`CURLMOPT_TIMERFUNCTION`), and `curl_multi_socket_action` runs only
/// when one of them is due. Nothing blocks and no thread is started (curl's
/// resolver thread only for a host name that is not an address).
///
/// Confinement: used only on `loop`. Ownership: the multi handle's socket
/// and timer data point at this object unretained; `deinit` cleans the
/// handle up (its connections close) before the object goes.
public final class CurlMulti {
    public let loop: any EventScheduler
    private let handle: UnsafeMutableRawPointer
    private var sockets: [curl_socket_t: any IOWatch] = [:]
    private var timer: (any LoopTimer)?
    private var transfers: [UnsafeMutableRawPointer: (CURLcode) -> Void] = [:]

    public init(loop: any EventScheduler) {
        loop.preconditionIsCurrent("libcurl's multi handle")
        self.loop = loop
        CurlEasy.setUpGlobally()
        guard let handle = curl_multi_init() else { fatalError("curl_multi_init failed: out of memory") }
        self.handle = handle
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = ccurl_multi_setopt_socket_function(handle, socketChanged)
        _ = ccurl_multi_setopt_pointer(handle, CURLMOPT_SOCKETDATA, me)
        _ = ccurl_multi_setopt_timer_function(handle, timeoutChanged)
        _ = ccurl_multi_setopt_pointer(handle, CURLMOPT_TIMERDATA, me)
        timer = loop.makeTimer { [weak self] in self?.act(on: ccurl_socket_timeout(), events: 0) }
    }

    deinit {
        for (easy, _) in transfers { curl_multi_remove_handle(handle, easy) }
        curl_multi_cleanup(handle)
        for watch in sockets.values { watch.cancel() }
        timer?.disarm()
    }

    /// Starts `easy`'s transfer; `done` runs on the loop with its result (never before this returns).
    public func start(_ easy: CurlEasy, done: @escaping (CURLcode) -> Void) -> Bool {
        guard curl_multi_add_handle(handle, easy.handle) == CURLM_OK else { return false }
        transfers[easy.handle] = done
        return true
    }

    fileprivate func socket(_ socket: curl_socket_t, wants what: Int32) {
        let events: IOEvents =
            switch what {
            case CURL_POLL_IN: .readable
            case CURL_POLL_OUT: .writable
            case CURL_POLL_INOUT: [.readable, .writable]
            default: []
            }
        if events.isEmpty {
            sockets.removeValue(forKey: socket)?.cancel()
        } else if let watch = sockets[socket] {
            watch.update(events)
        } else {
            sockets[socket] = loop.watch(socket, for: events) { [weak self] ready in
                var mask: Int32 = 0
                if ready.contains(.readable) { mask |= CURL_CSELECT_IN }
                if ready.contains(.writable) { mask |= CURL_CSELECT_OUT }
                if ready.contains(.hangUp) { mask |= CURL_CSELECT_ERR }
                self?.act(on: socket, events: mask)
            }
        }
    }

    fileprivate func timeout(_ milliseconds: Int) {
        // -1: no timeout wanted (nothing in flight): no timer, so nothing wakes the loop.
        if milliseconds < 0 { timer?.disarm() } else { timer?.arm(after: .milliseconds(milliseconds)) }
    }

    /// Lets curl act on a ready socket (or its timeout), then reports finished transfers.
    private func act(on socket: curl_socket_t, events: Int32) {
        var running: Int32 = 0
        _ = curl_multi_socket_action(handle, socket, events, &running)
        var left: Int32 = 0
        var finished: [(UnsafeMutableRawPointer, CURLcode)] = []
        while let message = curl_multi_info_read(handle, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            finished.append((easy, message.pointee.data.result))
        }
        // Reported after curl is done with its callbacks: a completion may start the next transfer.
        for (easy, code) in finished {
            curl_multi_remove_handle(handle, easy)
            transfers.removeValue(forKey: easy)?(code)
        }
        if transfers.isEmpty { timer?.disarm() }
    }
}

private let socketChanged: curl_socket_callback = { _, socket, what, context, _ in
    guard let context else { return 0 }
    Unmanaged<CurlMulti>.fromOpaque(context).takeUnretainedValue().socket(socket, wants: what)
    return 0
}

private let timeoutChanged: curl_multi_timer_callback = { _, milliseconds, context in
    guard let context else { return 0 }
    Unmanaged<CurlMulti>.fromOpaque(context).takeUnretainedValue().timeout(milliseconds)
    return 0
}
