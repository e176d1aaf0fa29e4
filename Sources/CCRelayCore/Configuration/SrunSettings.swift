import CoreVocabulary

/// The campus network's login protocol (`[server] protocol`).
public enum ServerProtocol: String, Sendable, Hashable, CaseIterable {
    /// The CC server's protocol (docs/protocol.md): a certificate or password login and keep-alives.
    case cc1
    /// A Srun (深澜) portal: a password login over plain HTTP, checked by polling `rad_user_info`.
    case srun
}

/// How a Srun portal is logged in to (`[srun]`), as campuses vary it.
public struct SrunSettings: Sendable, Hashable {
    /// How the login's `password={MD5}…` field is made (`[srun] hmd5`): what the school's portal page sends.
    public enum Digest: String, Sendable, Hashable, CaseIterable {
        /// HMAC-MD5 of the password keyed by the challenge (the portal's own script).
        case hmac
        /// HMAC-MD5 of nothing keyed by the challenge (BIT's clients).
        case hmacEmpty = "hmac-empty"
        /// MD5 of the password (Tsinghua).
        case md5
    }

    /// How `ccrelay logout` ends the session (`[srun] logout`).
    public enum Logout: String, Sendable, Hashable, CaseIterable {
        /// `srun_portal?action=logout` (no password needed).
        case portal
        /// A signed `rad_user_dm` (devices the portal registered by MAC).
        case dm
    }

    /// The access controller's number; nil: found from the portal's redirect (`ac-id = auto`).
    public var acID: Int?
    /// Appended to the user name (`@cmcc`); empty for none.
    public var domain = ""
    public var digest = Digest.hmac
    public var doubleStack = false
    /// Seconds between `rad_user_info` checks (10…3600).
    public var poll = 60
    public var logout = Logout.portal

    public init() {}

    /// The keys of `[srun]`.
    static let keys = ["ac-id", "domain", "hmd5", "double-stack", "poll", "logout"]

    /// Applies `[srun] key = value`; the problem with it, if any, in `localize`'s language.
    mutating func apply(_ key: String, _ value: String, flag: Bool?, localize: Localizer) -> String? {
        switch key {
        case "ac-id":
            if value == "auto" {
                acID = nil
            } else {
                guard value.count <= 6, let number = Int(value), (0...999_999).contains(number) else {
                    return TextTemplate.fill(
                        localize("ac-id must be auto or the access controller's number (the ac_id= in the portal's address), got '%s'"), value)
                }
                acID = number
            }
        case "domain":
            guard value.count <= 64, value.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F && $0 != "&" && $0 != "#" }) else {
                return TextTemplate.fill(
                    localize("domain must be the suffix the portal appends to the user, such as @cmcc (printable ASCII, no spaces), got '%s'"), value)
            }
            domain = value
        case "hmd5":
            guard let digest = Digest(rawValue: value) else { return TextTemplate.fill(localize("hmd5 must be hmac, hmac-empty or md5, got '%s'"), value) }
            self.digest = digest
        case "double-stack":
            guard let flag else { return TextTemplate.fill(localize("%s must be true or false, got '%s'"), key, value) }
            doubleStack = flag
        case "poll":
            guard value.count <= 5, let seconds = Int(value), (10...3600).contains(seconds) else {
                return TextTemplate.fill(
                    localize("poll must be a number of seconds from 10 to 3600 (between checks that the session is alive), got '%s'"), value)
            }
            poll = seconds
        case "logout":
            guard let logout = Logout(rawValue: value) else { return TextTemplate.fill(localize("logout must be portal or dm, got '%s'"), value) }
            self.logout = logout
        default:
            break
        }
        return nil
    }
}
