/// Where a password login looks for the campus password, in the order it
/// looks: the first that is there is used, and one there but unreadable is
/// the problem (it does not fall through to the next).
public enum PasswordSource: Sendable, Hashable {
    /// A systemd credential of this name (`LoadCredential=`), when the unit has one.
    case credential(String)
    /// `[auth] password-file`.
    case file(String)
    /// The desktop's keyring (Secret Service); never for the system service.
    case keyring

    /// The systemd credential a system service's password is loaded as.
    public static let credentialName = "campus-password"

    /// The order for `configuration`: the credential, the password file when
    /// one is named, then the keyring unless this is the system service.
    public static func order(for configuration: Configuration, systemService: Bool) -> [PasswordSource] {
        [.credential(credentialName)] + (configuration.passwordFile.map { [.file($0)] } ?? []) + (systemService ? [] : [.keyring])
    }
}
