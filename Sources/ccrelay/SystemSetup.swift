import DesktopServices
import EventLoop
import FileAccess
#if canImport(Glibc)
import Glibc
#endif

/// `ccrelay --system setup`: what differs when setting up the system service
/// (as root). The files go beside its configuration in a folder of the
/// service's own (`/etc/ccrelay/ccrelay.d/`, an instance's `NAME.d/`, so no
/// two instances share a file): the certificate and CA file root:ccrelay 0640,
/// the secrets — the configuration (it holds push keys), the private key,
/// the password file — the service's user's alone, 0600: members of the group
/// `ccrelay` steer the service over D-Bus, they do not read its secrets. A
/// password goes to a file (there is no keyring), and the unit is enabled
/// and started.
///
/// Root reads what a student named without following any link, checks it is
/// what it claims (a PEM certificate, a private key), and stages the copies
/// in a private folder; nothing is placed until the trial login worked, and
/// what it staged is removed on any failure or signal (`SetupCleanup`).
enum SystemSetup {
    /// The service's user and group, once it is sure setup runs as root and the package made them; else says why.
    static func serviceAccount() -> (user: uid_t, group: gid_t)? {
        guard geteuid() == 0 else {
            Output.error(localize("setup: the system service is set up as root: sudo ccrelay --system setup"))
            return nil
        }
        guard let group = getgrnam(SystemService.group), let user = getpwnam(SystemService.user) else {
            Output.error(fill(localize("setup: the user and group %s are missing; install the ccrelay package (it makes them), or: sudo systemd-sysusers"),
                              SystemService.group))
            return nil
        }
        return (user.pointee.pw_uid, group.pointee.gr_gid)
    }

    /// The home a `~` stands for in a path given to setup run with sudo: the
    /// invoking user's (`SUDO_USER`), not root's, whose home holds no student's files.
    static func invokingHome() -> String {
        if let name = getenv("SUDO_USER"), let user = getpwnam(name), let home = user.pointee.pw_dir {
            return String(cString: home)
        }
        return ConfigurationFile.home()
    }

    /// The folder of the service's own files: `NAME.d` beside its configuration.
    static func filesFolder(configuration path: String) -> String {
        let base = path.hasSuffix(".conf") ? String(path.dropLast(".conf".count)) : path
        return base + ".d"
    }

    /// Makes `folder` root:ccrelay 0750 (its parents 0755); false after saying why not.
    static func makeFolder(_ folder: String, group: gid_t) -> Bool {
        var built = ""
        for part in folder.split(separator: "/") {
            built += "/" + part
            if mkdir(built, built == folder ? 0o750 : 0o755) != 0 && errno != EEXIST {
                Output.error(fill(localize("setup: cannot create %s: %s"), built, SystemError.reason(errno)))
                return false
            }
        }
        // Root writes in it: it must be a real folder of root's, not a link someone planted.
        var info = stat()
        guard lstat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == 0 else {
            Output.error(fill(localize("setup: %s is not a folder of root's (a link, or another account's); remove it first"), folder))
            return false
        }
        return protect(folder, owner: 0, group: group, mode: 0o750)
    }

    /// `owner`:`group` and `mode` for `path`, never through a link; false after saying why not.
    @discardableResult
    static func protect(_ path: String, owner: uid_t, group: gid_t, mode: mode_t) -> Bool {
        guard fchownat(AT_FDCWD, path, owner, group, AT_SYMLINK_NOFOLLOW) == 0, chmod(path, mode) == 0 else {
            Output.error(fill(localize("setup: cannot give %s to the service: %s"), path, SystemError.reason(errno)))
            return false
        }
        return true
    }

    /// What a named file must be.
    enum FileKind {
        case certificate, key, caFile

        /// Whether `bytes` are that: PEM with a certificate, or a private key.
        func matches(_ bytes: [UInt8]) -> Bool {
            let text = String(decoding: bytes, as: UTF8.self)
            switch self {
            case .certificate, .caFile: return text.contains("-----BEGIN CERTIFICATE-----")
            case .key: return text.contains("-----BEGIN ") && text.contains("PRIVATE KEY-----")
            }
        }

        var what: String {
            switch self {
            case .certificate: localize("a PEM certificate")
            case .key: localize("a PEM private key")
            case .caFile: localize("a PEM CA certificate")
            }
        }

        /// Secrets are the service's user's alone; the rest its group's too.
        var secret: Bool { self == .key }
    }

    /// Copies that wait in a private folder for the trial login, then move
    /// into the service's files folder together — or are removed.
    final class Staging {
        let folder: String
        private(set) var staged: [(path: String, name: String, secret: Bool)] = []

        /// A root-only folder in `configurationFolder` (the same file system, so the copies move by rename).
        init?(in configurationFolder: String) {
            folder = configurationFolder + "/.ccrelay-setup-\(getpid())"
            SetupCleanup.register(folder, folder: true)
            guard mkdir(folder, 0o700) == 0 else {
                Output.error(fill(localize("setup: cannot create %s: %s"), folder, SystemError.reason(errno)))
                return nil
            }
        }

        /// Reads `source` (as root: following no link) and stages a copy when
        /// it is `kind`; the staged path, or nil after saying why not.
        func stage(_ source: String, as kind: FileKind, name: String? = nil) -> String? {
            let bytes: [UInt8]
            switch BoundedFile.readFollowingNoLinks(source, limit: 1 << 20) {
            case .success(let read): bytes = read
            case .failure(let problem):
                Output.error(fill(localize("setup: cannot use %s: %s"), source, problem.sentence(Localization.localizer)))
                return nil
            }
            guard kind.matches(bytes) else {
                Output.error(fill(localize("setup: %s is not %s; nothing was written"), source, kind.what))
                return nil
            }
            let base = name ?? String(source[source.index(after: source.lastIndex(of: "/") ?? source.startIndex)...])
            return add(bytes, named: base, secret: kind.secret)
        }

        /// Stages `bytes` as `name`; the staged path, or nil after saying why not.
        func add(_ bytes: [UInt8], named name: String, secret: Bool) -> String? {
            let path = folder + "/" + name
            SetupCleanup.register(path)
            guard SystemSetup.writeNew(bytes, to: path, saying: path) else { return nil }
            staged.append((path, name, secret))
            return path
        }

        /// Moves every staged file into `filesFolder` (root:ccrelay 0750),
        /// secrets to the service's user 0600, the rest root:ccrelay 0640; the
        /// final path of each staged path, or nil after saying why not (what
        /// was moved is removed again).
        func commit(to filesFolder: String, account: (user: uid_t, group: gid_t)) -> [String: String]? {
            guard SystemSetup.makeFolder(filesFolder, group: account.group) else { return nil }
            var placed: [String: String] = [:]
            for file in staged {
                let target = filesFolder + "/" + file.name
                let owned = file.secret
                    ? SystemSetup.protect(file.path, owner: account.user, group: account.group, mode: 0o600)
                    : SystemSetup.protect(file.path, owner: 0, group: account.group, mode: 0o640)
                // Until setup has written the configuration that names it, a signal removes it again.
                SetupCleanup.register(target)
                guard owned, rename(file.path, target) == 0 else {
                    Output.error(fill(localize("setup: cannot write %s: %s"), target, SystemError.reason(errno)))
                    placed.values.forEach { unlink($0) }
                    return nil
                }
                placed[file.path] = target
            }
            return placed
        }

        /// Removes what is still staged, and the folder.
        func discard() {
            for file in staged { unlink(file.path) }
            rmdir(folder)
        }
    }

    /// Writes `bytes` to `path` as the service's user's alone (0600), replacing it in one step; false after saying why not.
    static func writeSecret(_ bytes: [UInt8], to path: String, account: (user: uid_t, group: gid_t)) -> Bool {
        // A file of another account's where root writes: refused, not followed or replaced.
        var info = stat()
        if lstat(path, &info) == 0, info.st_mode & S_IFMT != S_IFREG || ![0, account.user].contains(info.st_uid) {
            Output.error(fill(localize("setup: %s is not a file of root's or the service's (a link?); remove it first"), path))
            return false
        }
        let temporary = path + ".ccrelay-setup-\(getpid())"
        SetupCleanup.register(temporary)
        defer { SetupCleanup.forget(temporary) }
        guard writeNew(bytes, to: temporary, saying: path) else { return false }
        guard protect(temporary, owner: account.user, group: account.group, mode: 0o600), rename(temporary, path) == 0 else {
            unlink(temporary)
            Output.error(fill(localize("setup: cannot write %s: %s"), path, SystemError.reason(errno)))
            return false
        }
        return true
    }

    /// Writes `bytes` to a new file at `path` (root's, 0600, never through a
    /// link); false after saying why not, naming `shown`.
    static func writeNew(_ bytes: [UInt8], to path: String, saying shown: String) -> Bool {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        let written = descriptor >= 0 && bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) } == bytes.count
        let reason = SystemError.reason(errno)
        if descriptor >= 0 { close(descriptor) }
        guard written else {
            if descriptor >= 0 { unlink(path) }
            Output.error(fill(localize("setup: cannot write %s: %s"), shown, reason))
            return false
        }
        return true
    }

    /// Enables and starts the unit (`ccrelay` or `ccrelay@NAME`) unless `start` is false, then
    /// says the command that shows its state.
    static func finish(instance: String?, start: Bool) {
        let unit = instance.map { "ccrelay@\($0).service" } ?? "ccrelay.service"
        // Last, however it went: the command that shows its state.
        defer { Output.out(fill(localize("Its state: %s"), "ccrelay --system" + (instance.map { "=" + $0 } ?? "") + " status")) }
        guard start, access("/usr/bin/systemctl", X_OK) == 0 else {
            Output.out(fill(localize("Start the system service with: systemctl enable --now %s"), unit))
            return
        }
        let started = runChild("/usr/bin/systemctl", ["--quiet", "enable", "--now", unit], output: .capture)
        if started.status == 0 {
            Output.out(fill(localize("The system service runs now and starts at every boot (systemctl enable --now %s)."), unit))
        } else {
            // The configuration stands; what systemd said, and where to look.
            Output.error(fill(localize("setup: systemctl enable --now %s failed; it said:"), unit))
            for line in started.output.split(separator: "\n") { Output.error("  " + Output.printable(String(line))) }
            Output.error(fill(localize("setup: the configuration is written; see why the unit did not start with: systemctl status %s; journalctl -u %s — and once that is fixed: systemctl enable --now %s (a unit that does not exist: reinstall the ccrelay package)"),
                              unit, unit, unit))
        }
    }
}
