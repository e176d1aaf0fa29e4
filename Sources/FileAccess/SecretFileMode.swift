import CoreVocabulary
#if canImport(Glibc)
import Glibc
#endif

/// The rule for files that hold secrets (the configuration, a key, a
/// password file): nobody but the owner may read them. For the system
/// service the owner is its user (`ccrelay`, mode 0600): members of the group
/// `ccrelay` steer the service, they do not read its secrets.
public enum SecretFileMode {
    /// The system service's group, whose members may steer it.
    public static let serviceGroup = "ccrelay"

    /// What is wrong with `path`'s owner and mode, in `localize`'s language
    /// (`what` names it in the sentence), or nil when only its owner may read
    /// it — or it is `0640 root:ccrelay`, as ccrelay 0.2 set the system
    /// service up, which `groupReadable` warns about.
    public static func problem(_ path: String, called what: String? = nil, localize: Localizer) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        let mode = info.st_mode & 0o777
        if mode & 0o077 == 0 || isOldServiceLayout(info) { return nil }
        return TextTemplate.fill(
            localize("%s may be read by other users (mode %s); fix it with: chmod 600 %s (for the system service: chown %s: %s && chmod 600 %s)"),
            what ?? path, String(mode, radix: 8), path, serviceGroup, path, path)
    }

    /// A warning in `localize`'s language when members of the group `ccrelay` may read `path` (the
    /// 0.2 layout, `0640 root:ccrelay`): the secret should be the service's alone.
    public static func groupReadable(_ path: String, called what: String, localize: Localizer) -> String? {
        var info = stat()
        guard stat(path, &info) == 0, isOldServiceLayout(info) else { return nil }
        return TextTemplate.fill(
            localize("%s may be read by every member of the group %s, who may only steer the service: make it the service's alone with: chown %s: %s && chmod 600 %s"),
            what, serviceGroup, serviceGroup, path, path)
    }

    private static func isOldServiceLayout(_ info: stat) -> Bool {
        info.st_mode & 0o037 == 0 && info.st_mode & 0o040 != 0 && info.st_uid == 0 && groupName(info.st_gid) == serviceGroup
    }

    private static func groupName(_ gid: gid_t) -> String? {
        var group = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getgrgid_r(gid, &group, &buffer, buffer.count, &result) == 0, result != nil, let name = group.gr_name else { return nil }
        return String(cString: name)
    }
}
