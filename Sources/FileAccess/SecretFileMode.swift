#if canImport(Glibc)
import Glibc
#endif

/// The rule for files that hold secrets (the configuration, a key, a
/// password file): nobody but the owner may read them — or, for the system
/// service, the owner root and the group `ccrelay` (mode 0640 root:ccrelay).
public enum SecretFileMode {
    /// The system service's group (`ccrelay`), which may read a 0640 root-owned secret.
    public static let serviceGroup = "ccrelay"

    /// What is wrong with `path`'s owner and mode (`what` names it in the
    /// sentence), or nil when only those who may read it can.
    public static func problem(_ path: String, called what: String? = nil) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        let mode = info.st_mode & 0o777
        if mode & 0o077 == 0 { return nil }
        if mode & 0o037 == 0, info.st_uid == 0, groupName(info.st_gid) == SecretFileMode.serviceGroup { return nil }
        return "\(what ?? path) may be read by other users (mode \(String(mode, radix: 8))); fix it with: chmod 600 \(path) "
            + "(or, for the system service: chown root:\(SecretFileMode.serviceGroup) \(path) && chmod 640 \(path))"
    }

    private static func groupName(_ gid: gid_t) -> String? {
        var group = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getgrgid_r(gid, &group, &buffer, buffer.count, &result) == 0, result != nil, let name = group.gr_name else { return nil }
        return String(cString: name)
    }
}
