import CCProtocol
import CCRelayCore

/// The campus network's login protocol as the daemon shell drives it: a
/// login, a check that the session lives (CC/1's keep-alive, a Srun portal's
/// `rad_user_info`), a logout — each answered on the shell's loop in the
/// core's terms (`LoginResult`, `KeepAliveResult`), one at a time, in order.
/// `CCCampusClient` speaks CC/1, `SrunCampusClient` a Srun portal.
protocol CampusClient: AnyObject {
    func login(device: String, user: String?, password: String?, timeout: Duration, completion: @escaping (LoginResult) -> Void)
    /// A keep-alive carrying report `seq` (and the location fix), or a check of the session `token` names.
    func check(session token: String, seq: UInt64, location: LocationFix?, timeout: Duration, completion: @escaping (KeepAliveResult) -> Void)
    func logout(session token: String, timeout: Duration, completion: @escaping () -> Void)
    /// Drops the kept connection in turn; the next request opens a fresh one.
    func dropConnection(completion: @escaping () -> Void)
}

/// CC/1 through a `CCTransport` (`CCClient`, or a scripted server in the
/// shell's tests), its exchanges read once (`LoginReading`, `KeepAliveReading`).
final class CCCampusClient: CampusClient {
    let transport: any CCTransport

    init(_ transport: any CCTransport) { self.transport = transport }

    func login(device: String, user: String?, password: String?, timeout: Duration, completion: @escaping (LoginResult) -> Void) {
        transport.login(device: device, user: user, password: password, timeout: timeout) { exchange in
            let reading = LoginReading(exchange)
            completion(LoginResult(
                grant: reading.grant.map { LoginResult.Grant(token: $0.session, ip: $0.ip, location: $0.location) },
                problem: reading.problem, droppedNotices: reading.droppedNotices, answer: reading.answer))
        }
    }

    func check(session token: String, seq: UInt64, location: LocationFix?, timeout: Duration, completion: @escaping (KeepAliveResult) -> Void) {
        transport.keepAlive(session: token, seq: seq, location: location, timeout: timeout) { exchange in
            let reading = KeepAliveReading(exchange)
            completion(KeepAliveResult(
                problem: reading.problem, droppedNotices: reading.droppedNotices, locationRejected: reading.locationRejected,
                answer: reading.answer))
        }
    }

    func logout(session token: String, timeout: Duration, completion: @escaping () -> Void) {
        transport.logout(session: token, timeout: timeout) { _ in completion() }
    }

    func dropConnection(completion: @escaping () -> Void) { transport.dropConnection(completion: completion) }
}
