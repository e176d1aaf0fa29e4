import CDBus
import Dispatch

/// Hands libdbus's file descriptors and timeouts to `DispatchSource`s on the
/// connection's queue: the connection wakes only when its socket is readable,
/// writable while it has output queued, or a call's reply timeout is due.
extension Connection {
    func attachToLoop() {
        dispatchPrecondition(condition: .onQueue(queue))
        let ok =
            dbus_connection_set_watch_functions(
                raw, addWatch, removeWatch, toggleWatch, contextRetained(), releaseContext) != 0
            && dbus_connection_set_timeout_functions(
                raw, addTimeout, removeTimeout, toggleTimeout, contextRetained(), releaseContext) != 0
            && dbus_connection_add_filter(raw, filterMessage, contextRetained(), releaseContext) != 0
        precondition(ok, "out of memory attaching a D-Bus connection to its queue")
        dbus_connection_set_dispatch_status_function(raw, dispatchStatusChanged, contextRetained(), releaseContext)
        dispatchQueued()
    }

    /// Stops watching the connection's descriptors (after it closed or dropped).
    func detachFromLoop() {
        dbus_connection_set_watch_functions(raw, nil, nil, nil, nil, nil)
        dbus_connection_set_timeout_functions(raw, nil, nil, nil, nil, nil)
        dbus_connection_set_dispatch_status_function(raw, nil, nil, nil)
        // libdbus finds the filter by function and data pointer, and releases the context.
        dbus_connection_remove_filter(raw, filterMessage, contextIdentity)
    }
}

/// A libdbus watch (one descriptor, read or write) and its dispatch source.
///
/// Ownership: stored in the watch with `dbus_watch_set_data`, retained once and
/// released by libdbus through `releaseWatchBox` when the watch is freed.
private final class WatchBox {
    let watch: OpaquePointer
    var source: DispatchSourceProtocol?
    init(_ watch: OpaquePointer) { self.watch = watch }

    func update(queue: DispatchQueue, context: CallbackContext) {
        source?.cancel()
        source = nil
        guard dbus_watch_get_enabled(watch) != 0 else { return }
        let fd = dbus_watch_get_unix_fd(watch)
        let flags = dbus_watch_get_flags(watch)
        let writable = flags & CDBUS_WATCH_WRITABLE != 0
        let newSource: DispatchSourceProtocol =
            writable
            ? DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
            : DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        let watch = self.watch
        newSource.setEventHandler { [weak context] in
            dbus_watch_handle(watch, writable ? CDBUS_WATCH_WRITABLE : CDBUS_WATCH_READABLE)
            context?.connection?.dispatchQueued()
        }
        newSource.resume()
        source = newSource
    }

    deinit { source?.cancel() }
}

private let releaseWatchBox: DBusFreeFunction = { pointer in
    Unmanaged<WatchBox>.fromOpaque(pointer!).release()
}

private func watchBox(_ watch: OpaquePointer?) -> WatchBox? {
    guard let watch, let data = dbus_watch_get_data(watch) else { return nil }
    return Unmanaged<WatchBox>.fromOpaque(data).takeUnretainedValue()
}

private let addWatch: DBusAddWatchFunction = { watch, data in
    guard let watch else { return 0 }
    let context = CallbackContext.from(data)
    let box = WatchBox(watch)
    dbus_watch_set_data(watch, Unmanaged.passRetained(box).toOpaque(), releaseWatchBox)
    box.update(queue: context.queue, context: context)
    return 1
}

private let removeWatch: DBusRemoveWatchFunction = { watch, _ in
    guard let watch else { return }
    // Setting the data to nil releases the box (and cancels its source).
    dbus_watch_set_data(watch, nil, nil)
}

private let toggleWatch: DBusWatchToggledFunction = { watch, data in
    watchBox(watch)?.update(queue: CallbackContext.from(data).queue, context: CallbackContext.from(data))
}

/// A libdbus timeout (a pending call's reply deadline) and its timer.
///
/// Ownership: as `WatchBox`, stored with `dbus_timeout_set_data` and released
/// through `releaseTimeoutBox`.
private final class TimeoutBox {
    let timeout: OpaquePointer
    var timer: DispatchSourceTimer?
    init(_ timeout: OpaquePointer) { self.timeout = timeout }

    func update(queue: DispatchQueue, context: CallbackContext) {
        timer?.cancel()
        timer = nil
        guard dbus_timeout_get_enabled(timeout) != 0 else { return }
        let interval = DispatchTimeInterval.milliseconds(Int(dbus_timeout_get_interval(timeout)))
        let newTimer = DispatchSource.makeTimerSource(queue: queue)
        newTimer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(10))
        let timeout = self.timeout
        newTimer.setEventHandler { [weak context] in
            dbus_timeout_handle(timeout)
            context?.connection?.dispatchQueued()
        }
        newTimer.resume()
        timer = newTimer
    }

    deinit { timer?.cancel() }
}

private let releaseTimeoutBox: DBusFreeFunction = { pointer in
    Unmanaged<TimeoutBox>.fromOpaque(pointer!).release()
}

private let addTimeout: DBusAddTimeoutFunction = { timeout, data in
    guard let timeout else { return 0 }
    let context = CallbackContext.from(data)
    let box = TimeoutBox(timeout)
    dbus_timeout_set_data(timeout, Unmanaged.passRetained(box).toOpaque(), releaseTimeoutBox)
    box.update(queue: context.queue, context: context)
    return 1
}

private let removeTimeout: DBusRemoveTimeoutFunction = { timeout, _ in
    guard let timeout else { return }
    dbus_timeout_set_data(timeout, nil, nil)
}

private let toggleTimeout: DBusTimeoutToggledFunction = { timeout, data in
    guard let timeout, let box = dbus_timeout_get_data(timeout) else { return }
    let context = CallbackContext.from(data)
    Unmanaged<TimeoutBox>.fromOpaque(box).takeUnretainedValue().update(queue: context.queue, context: context)
}

/// libdbus may call this with its lock held, so it only schedules dispatching.
private let dispatchStatusChanged: DBusDispatchStatusFunction = { _, status, data in
    guard status == DBUS_DISPATCH_DATA_REMAINS else { return }
    let context = CallbackContext.from(data)
    context.queue.async { [weak context] in context?.connection?.dispatchQueued() }
}

let filterMessage: DBusHandleMessageFunction = { _, message, data in
    guard let message, let connection = CallbackContext.from(data).connection else {
        return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
    }
    return connection.handle(message) ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
}
