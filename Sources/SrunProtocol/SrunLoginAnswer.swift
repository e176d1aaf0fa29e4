/// How the portal answered `srun_portal?action=login`.
public enum SrunLoginAnswer: Sendable, Hashable {
    /// Logged in.
    case loggedIn(SrunLoginGrant)
    /// This address was online already (`suc_msg` `ip_already_online_error`): nothing changed.
    case alreadyOnline(ip: String?)
    /// Not logged in (or not known to be: `.maybeOnline`), with the portal's own words.
    case refused(SrunRefusal, words: String)

    /// Reads a login answer (`error` `ok` is a login; anything else is classified), or says why it is not one.
    static func read(_ body: [UInt8], callback: String) -> Result<SrunLoginAnswer, SrunAnswer.Problem> {
        SrunAnswer.read(body, callback: callback).map { answer in
            guard answer.error == "ok" else {
                return .refused(answer.refusal, words: answer.words)
            }
            let ip = answer.address("online_ip") ?? answer.address("client_ip")
            if answer.text("suc_msg") == "ip_already_online_error" { return .alreadyOnline(ip: ip) }
            // The portal's script shows ploy_msg unless it is the E0000 success line.
            let said = answer.text("ploy_msg", limit: 300).flatMap { $0.isEmpty || $0.hasPrefix("E0000") ? nil : $0 }
            return .loggedIn(SrunLoginGrant(onlineIP: ip, message: said, serverVersion: answer.text("srun_ver", limit: 64)))
        }
    }
}

/// What a granted login says.
public struct SrunLoginGrant: Sendable, Hashable {
    /// The address now online (`online_ip`, else `client_ip`), when a valid one came.
    public var onlineIP: String?
    /// `ploy_msg` when it says more than `E0000: Login is successful.`
    public var message: String?
    /// `srun_ver`.
    public var serverVersion: String?

    public init(onlineIP: String?, message: String? = nil, serverVersion: String? = nil) {
        self.onlineIP = onlineIP
        self.message = message
        self.serverVersion = serverVersion
    }
}
