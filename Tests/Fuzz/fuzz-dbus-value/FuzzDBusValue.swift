import CDBus
@testable import DBus

// libFuzzer target: the D-Bus value decoder. The input is a marshalled
// message (libdbus checks its framing); whatever it holds is decoded into
// `Value`s, encoded again (validated before libdbus sees it: libdbus aborts
// on invalid names or strings) and decoded a second time: the same values.

/// The one-input entry libFuzzer\'s own main looks for; the target\'s main.swift runs the loop with it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDBusValue(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size < 1 << 16 else { return 0 }
    var error = DBusError()
    dbus_error_init(&error)
    defer { dbus_error_free(&error) }
    guard let raw = data.withMemoryRebound(to: CChar.self, capacity: size, { dbus_message_demarshal($0, Int32(size), &error) })
    else { return 0 }
    defer { dbus_message_unref(raw) }
    let message = Message(reading: raw)
    for index in message.body.indices {
        _ = try? message.argument(index, as: String.self)
        _ = try? message.argument(index, as: [String: Variant].self)
        _ = try? message.argument(index, as: UInt32.self)
    }
    guard case .signal = message.kind else { return 0 }
    guard let again = try? message.makeRaw() else { return 0 }
    defer { dbus_message_unref(again) }
    precondition(Message(reading: again).body == message.body, "values survive a round trip")
    return 0
}
