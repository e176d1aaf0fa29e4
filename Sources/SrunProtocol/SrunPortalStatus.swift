/// `rad_user_info`'s answer with the portal's own version: what `ccrelay
/// doctor` shows of a Srun portal without logging in.
public struct SrunPortalStatus: Sendable, Hashable {
    /// Whether a session is online at this address, and its account's facts.
    public var userInfo: SrunUserInfo
    /// `srun_ver` (`SRunCGIAuthIntfSvr V1.18 B20210909`), cleaned and at most 64 characters; nil when the answer had none.
    public var serverVersion: String?

    public init(userInfo: SrunUserInfo, serverVersion: String? = nil) {
        self.userInfo = userInfo
        self.serverVersion = serverVersion
    }

    /// Reads a `rad_user_info` answer as `SrunUserInfo` does, and its `srun_ver` (the legacy text form has none).
    static func read(_ body: [UInt8], callback: String) -> Result<SrunPortalStatus, SrunAnswer.Problem> {
        SrunUserInfo.read(body, callback: callback).map { info in
            let version = try? SrunAnswer.read(body, callback: callback).get().text("srun_ver", limit: 64)
            return SrunPortalStatus(userInfo: info, serverVersion: version.flatMap { $0.isEmpty ? nil : $0 })
        }
    }
}
