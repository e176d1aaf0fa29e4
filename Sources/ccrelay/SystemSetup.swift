import DesktopServices
import EventLoop
import FileAccess
#if canImport(Glibc)
import Glibc
#endif

/// `ccrelay --system setup`: what differs when setting up the system service
/// (as root) — the files go to `/etc/ccrelay`, owned by root and readable by
/// the group `ccrelay` the service runs in (0640; the folder 0750), the
/// certificate files are copied there (the service cannot read a home), a
/// password goes to a file beside them (there is no keyring), and the unit is
/// enabled and started.
enum SystemSetup {
    /// The group's id, once it is sure setup runs as root and the package made the group; else says why.
    static func serviceGroup() -> gid_t? {
        guard geteuid() == 0 else {
            Output.error(localize("setup: the system service is set up as root: sudo ccrelay --system setup"))
            return nil
        }
        guard let group = getgrnam(SystemService.group) else {
            Output.error(fill(localize("setup: the group %s is missing; install the ccrelay package (it makes the user and group), or: sudo systemd-sysusers"),
                              SystemService.group))
            return nil
        }
        return group.pointee.gr_gid
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
        return protect(folder, group: group, mode: 0o750)
    }

    /// root:ccrelay and `mode` for `path`; false after saying why not.
    @discardableResult
    static func protect(_ path: String, group: gid_t, mode: mode_t = 0o640) -> Bool {
        guard chown(path, 0, group) == 0, chmod(path, mode) == 0 else {
            Output.error(fill(localize("setup: cannot give %s to the group %s: %s"), path, SystemService.group, SystemError.reason(errno)))
            return false
        }
        return true
    }

    /// Copies a certificate or key file into `folder` (root:ccrelay 0640)
    /// unless it is there already; the path to use, or nil after saying why not.
    static func place(_ file: String, in folder: String, group: gid_t) -> String? {
        let name = String(file[file.index(after: file.lastIndex(of: "/") ?? file.startIndex)...])
        let target = folder + "/" + name
        guard target != file else { return protect(file, group: group) ? file : nil }
        guard case .success(let bytes) = BoundedFile.read(file, limit: 1 << 20) else {
            Output.error(fill(localize("setup: cannot read %s"), file))
            return nil
        }
        guard write(bytes, to: target, group: group) else { return nil }
        Output.out(fill(localize("  Copied %s to %s (root:%s, mode 0640: the service can read it, nobody else)."), file, target, SystemService.group))
        return target
    }

    /// Writes `bytes` to `path` as root:ccrelay 0640, replacing it in one step; false after saying why not.
    static func write(_ bytes: [UInt8], to path: String, group: gid_t) -> Bool {
        let temporary = path + ".ccrelay-setup-\(getpid())"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            Output.error(fill(localize("setup: cannot write %s: %s"), path, SystemError.reason(errno)))
            return false
        }
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) } == bytes.count
        close(descriptor)
        guard written, protect(temporary, group: group), rename(temporary, path) == 0 else {
            unlink(temporary)
            Output.error(fill(localize("setup: cannot write %s: %s"), path, SystemError.reason(errno)))
            return false
        }
        return true
    }

    /// Enables and starts the unit (`ccrelay` or `ccrelay@NAME`) unless `start` is false, then
    /// says the command that shows its state.
    static func finish(instance: String?, start: Bool) {
        let unit = instance.map { "ccrelay@\($0).service" } ?? "ccrelay.service"
        if start, access("/usr/bin/systemctl", X_OK) == 0, runToEnd("/usr/bin/systemctl", ["--quiet", "enable", "--now", unit], quiet: true) {
            Output.out(fill(localize("The system service runs now and starts at every boot (systemctl enable --now %s)."), unit))
        } else {
            Output.out(fill(localize("Start the system service with: systemctl enable --now %s"), unit))
        }
        Output.out(fill(localize("Its state: %s"), "ccrelay --system" + (instance.map { "=" + $0 } ?? "") + " status"))
    }
}
