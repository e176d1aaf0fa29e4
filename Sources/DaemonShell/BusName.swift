import DBus
import DesktopServices

/// The daemon's well-known name, `io.github.ccrelay.CCRelay`: one daemon per
/// session bus, and one system service per system bus.
enum BusName {
    /// Takes `name` on `connection`; when another daemon has it, `done`
    /// gets an error saying which process that is and how to stop it (`stop`).
    static func claim(_ name: String = ControlNames.busName, on connection: Connection, stop: String, done: @escaping (BusNameError?) -> Void) {
        connection.requestName(name) { reply in
            guard case .success(let code) = reply, code != .primaryOwner && code != .alreadyOwner else {
                if case .failure(let error) = reply { return done(BusNameError("cannot claim \(name): \(error.message)")) }
                return done(nil)
            }
            func refuse(_ who: String) {
                done(BusNameError(
                    "another ccrelay daemon already runs on this bus: \(who) owns \(name). "
                        + "Use that one, or stop it first (\(stop))."))
            }
            connection.nameOwner(name) { owner in
                guard case .success(let owner?) = owner else { return refuse("another process") }
                connection.call(.methodCall(
                    destination: StandardNames.bus, path: StandardNames.busPath, interface: StandardNames.bus,
                    member: "GetConnectionUnixProcessID", body: [.string(owner)])
                ) { reply in
                    guard let pid = try? reply.get().argument(0, as: UInt32.self) else { return refuse(owner) }
                    refuse("process \(pid) (\(owner))")
                }
            }
        }
    }
}

/// Why the daemon could not take its name on its bus: another daemon has it
/// (which process, and how to stop it), or the bus refused.
struct BusNameError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
