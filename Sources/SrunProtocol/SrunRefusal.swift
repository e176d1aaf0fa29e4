/// Why a Srun portal did not log in (or out), in the classes the daemon maps
/// onto its problem codes. Always shown with the portal's own words.
public enum SrunRefusal: Sendable, Hashable {
    /// E2531 (no such user), E2553 (wrong password), E2901 with an LDAP or SAM bind error.
    case badCredentials
    /// E2901 "Cannot connect to the third_auth server": the campus's
    /// directory is away for now; trying again later may work.
    case transient
    /// E2620: the account is online elsewhere (or a stale session holds it).
    case onlineElsewhere
    /// E3001 (traffic or time used up), E3004 (balance too low), E2616 (in arrears).
    case quotaExhausted
    /// E2606 (disabled), E2534 (disabled for a while for proxy use).
    case accountDisabled
    /// E2532 (two logins within 3 s), E2533 (too many tries): wait `retryAfter`, then try again.
    case rateLimited(retryAfter: Duration)
    /// `challenge_expire_error`, still after the client fetched a fresh challenge once.
    case challengeExpired
    /// `no_response_data_error`: the login may well have worked; ask `rad_user_info`.
    case maybeOnline
    /// `INFO failed, BAS respond timeout.`, `INFO Error…`, `no_acid_error`,
    /// `Nas type not found.`: almost always the wrong `[srun] ac-id`.
    case portalMisconfigured
    /// `sign_error`, `missing_required_parameters_error`: the portal did not
    /// take the request as ccrelay made it.
    case protocolError
    /// E2601 (the portal wants its own client), E2611–E2615 (MAC, NAS port,
    /// VLAN or IP binding), E2806–E2808 (no product, billing or control
    /// policy): the campus must change something.
    case permanent
    /// E2535 (authentication switched off), E2536 (the system's licence expired).
    case serverError
    /// Anything else: only the portal's words say what.
    case unknown

    /// How long E2532 asks to wait: 3 s, with a margin (as smart-srun waits).
    public static let retryPause = Duration.milliseconds(3500)

    /// The class of a failure answer, from its `ecode`, `error` and
    /// `error_msg` (the E-code is taken from `ecode`, else from the start
    /// of `error_msg` or `error`).
    static func classify(ecode: String?, error: String?, message: String?) -> SrunRefusal {
        let said = [error, message].compactMap { $0?.lowercased() }
        func says(_ words: String...) -> Bool { said.contains { text in words.contains { text.contains($0) } } }
        if let code = [ecode, message, error].lazy.compactMap({ $0.flatMap(Self.code) }).first {
            switch code {
            case 2531, 2553: return .badCredentials
            case 2901:
                if says("cannot connect to the third_auth server") { return .transient }
                return says("ldap", "sam_err", "bind_user") ? .badCredentials : .unknown
            case 2620: return .onlineElsewhere
            case 3001, 3004, 2616: return .quotaExhausted
            case 2606, 2534: return .accountDisabled
            case 2532, 2533: return .rateLimited(retryAfter: retryPause)
            case 2601, 2611...2615, 2806...2808: return .permanent
            case 2535, 2536: return .serverError
            default: return .unknown
            }
        }
        if says("challenge_expire_error") { return .challengeExpired }
        if says("no_response_data_error") { return .maybeOnline }
        if says("sign_error", "missing_required_parameters_error") { return .protocolError }
        if says("info failed, bas respond timeout", "info error", "no_acid_error", "nas type not found") { return .portalMisconfigured }
        return .unknown
    }

    /// The number of an `E` code that starts `text` (`E2553`, `E2553: Password is error.`).
    private static func code(_ text: String) -> Int? {
        let bytes = Array(text.utf8.prefix(6))
        guard bytes.count >= 5, bytes[0] == UInt8(ascii: "E"), bytes[1...4].allSatisfy({ (0x30...0x39).contains($0) }),
            bytes.count == 5 || !(0x30...0x39).contains(bytes[5])
        else { return nil }
        return Int(String(decoding: bytes[1...4], as: UTF8.self))
    }
}
