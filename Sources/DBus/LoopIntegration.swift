import CDBus
import EventLoop

/// Hands libdbus's file descriptors and timeouts to the connection's loop: the
/// connection wakes only when its socket is readable,
/// writable while it has output queued, or a call's reply timeout is due.
extension Connection {
    func attachToLoop() {
        loop.preconditionIsCurrent("a D-Bus connection")
        let ok =
            dbus_connection_set_watch_functions(
                raw, addWatch, removeWatch, toggleWatch, contextRetained(), releaseContext) != 0
            && dbus_connection_set_timeout_functions(
                raw, addTimeout, removeTimeout, toggleTimeout, contextRetained(), releaseContext) != 0
            && dbus_connection_add_filter(raw, filterMessage, contextRetained(), releaseContext) != 0
        precondition(ok, "out of memory attaching a D-Bus connection to its loop")
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

/// A libdbus watch (one descriptor, read or write) and its registration
/// with the loop (which merges the two directions of one descriptor).
///
/// Ownership: stored in the watch with `dbus_watch_set_data`, retained once and
/// released by libdbus through `releaseWatchBox` when the watch is freed.
private final class WatchBox {
    let watch: OpaquePointer
    var registration: (any IOWatch)?
    init(_ watch: OpaquePointer) { self.watch = watch }

    func update(context: CallbackContext) {
        let wanted: IOEvents =
            dbus_watch_get_enabled(watch) == 0 ? []
            : dbus_watch_get_flags(watch) & CDBUS_WATCH_WRITABLE != 0 ? .writable : .readable
        if let registration {
            registration.update(wanted)
            return
        }
        let watch = self.watch
        registration = context.loop.watch(dbus_watch_get_unix_fd(watch), for: wanted) { [weak context] ready in
            var flags: UInt32 = 0
            if ready.contains(.readable) { flags |= CDBUS_WATCH_READABLE }
            if ready.contains(.writable) { flags |= CDBUS_WATCH_WRITABLE }
            if ready.contains(.hangUp) { flags |= CDBUS_WATCH_HANGUP | CDBUS_WATCH_ERROR }
            dbus_watch_handle(watch, flags)
            context?.connection?.dispatchQueued()
        }
    }

    deinit { registration?.cancel() }
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
    box.update(context: context)
    return 1
}

private let removeWatch: DBusRemoveWatchFunction = { watch, _ in
    guard let watch else { return }
    // Setting the data to nil releases the box (and cancels its source).
    dbus_watch_set_data(watch, nil, nil)
}

private let toggleWatch: DBusWatchToggledFunction = { watch, data in
    watchBox(watch)?.update(context: CallbackContext.from(data))
}

/// A libdbus timeout (a pending call's reply deadline) and its loop timer,
/// armed again after each expiry for as long as libdbus keeps it enabled.
///
/// Ownership: as `WatchBox`, stored with `dbus_timeout_set_data` and released
/// through `releaseTimeoutBox`.
private final class TimeoutBox {
    let timeout: OpaquePointer
    var timer: (any LoopTimer)?
    init(_ timeout: OpaquePointer) { self.timeout = timeout }

    func update(context: CallbackContext) {
        guard dbus_timeout_get_enabled(timeout) != 0 else {
            timer?.disarm()
            return
        }
        let interval = Duration.milliseconds(dbus_timeout_get_interval(timeout))
        if timer == nil {
            let timeout = self.timeout
            timer = context.loop.makeTimer { [weak self, weak context] in
                self?.timer?.arm(after: interval)
                dbus_timeout_handle(timeout)
                context?.connection?.dispatchQueued()
            }
        }
        timer?.arm(after: interval)
    }

    deinit { timer?.disarm() }
}

private let releaseTimeoutBox: DBusFreeFunction = { pointer in
    Unmanaged<TimeoutBox>.fromOpaque(pointer!).release()
}

private let addTimeout: DBusAddTimeoutFunction = { timeout, data in
    guard let timeout else { return 0 }
    let context = CallbackContext.from(data)
    let box = TimeoutBox(timeout)
    dbus_timeout_set_data(timeout, Unmanaged.passRetained(box).toOpaque(), releaseTimeoutBox)
    box.update(context: context)
    return 1
}

private let removeTimeout: DBusRemoveTimeoutFunction = { timeout, _ in
    guard let timeout else { return }
    dbus_timeout_set_data(timeout, nil, nil)
}

private let toggleTimeout: DBusTimeoutToggledFunction = { timeout, data in
    guard let timeout, let box = dbus_timeout_get_data(timeout) else { return }
    let context = CallbackContext.from(data)
    Unmanaged<TimeoutBox>.fromOpaque(box).takeUnretainedValue().update(context: context)
}

/// libdbus may call this with its lock held, so it only schedules dispatching.
private let dispatchStatusChanged: DBusDispatchStatusFunction = { _, status, data in
    guard status == DBUS_DISPATCH_DATA_REMAINS else { return }
    let context = CallbackContext.from(data)
    context.loop.execute { [weak context] in context?.connection?.dispatchQueued() }
}

let filterMessage: DBusHandleMessageFunction = { _, message, data in
    guard let message, let connection = CallbackContext.from(data).connection else {
        return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
    }
    return connection.handle(message) ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
}
