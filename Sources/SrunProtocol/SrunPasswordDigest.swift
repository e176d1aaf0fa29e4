/// How the login's `password={MD5}…` value (`hmd5`) is made. The portal
/// reads the password from `info` and uses `hmd5` only inside `chksum`, so
/// every form logs in; schools' clients differ, and a portal may someday check.
public enum SrunPasswordDigest: String, Sendable, Hashable, CaseIterable {
    /// HMAC-MD5 keyed with the challenge over the password: the portal's own script.
    case hmac
    /// HMAC-MD5 keyed with the challenge over nothing: BIT's clients since 2018.
    case hmacEmpty = "hmac-empty"
    /// MD5 of the password: Tsinghua's client.
    case md5
}
