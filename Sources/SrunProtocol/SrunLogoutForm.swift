import SrunCodec

/// How to end the session.
public enum SrunLogoutMethod: Sendable, Hashable {
    /// `srun_portal?action=logout`: no password needed (BIT, bitsrun).
    case portal
    /// The signed `rad_user_dm` ("DM", unbind): also for devices registered by MAC.
    case dm
}

/// The values of a logout, in the order the portal's clients send them, before `callback` and `_`.
enum SrunLogoutForm {
    static func portal(username: String, acID: String, ip: String) -> [(name: String, value: String)] {
        [("action", "logout"), ("username", username), ("ac_id", acID), ("ip", ip)]
    }

    /// `rad_user_dm`: `sign = SHA-1(time + username + ip + unbind + time)`, `time` in Unix seconds.
    static func dm(username: String, ip: String, time: Int64) -> [(name: String, value: String)] {
        [("ip", ip), ("username", username), ("time", String(time)), ("unbind", "1"),
         ("sign", sign(time: time, username: username, ip: ip, unbind: "1"))]
    }

    static func sign(time: Int64, username: String, ip: String, unbind: String) -> String {
        SrunDigest.sha1Hex(Array((String(time) + username + ip + unbind + String(time)).utf8))
    }
}
