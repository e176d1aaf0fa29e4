#if canImport(Glibc)
import Glibc
#endif

/// What setup leaves behind until it finishes — its trial configuration
/// (which may hold a bot token), the copies it stages — removed when it
/// fails, and when SIGINT, SIGTERM or SIGHUP ends it: the handler only
/// unlinks the paths registered (kept as C strings made beforehand, so it
/// allocates nothing) and exits. The trial's helper ends with setup by
/// itself (its parent-death signal).
enum SetupCleanup {
    private static let capacity = 32
    /// Files first, then folders (each removed only once empty), as registered.
    nonisolated(unsafe) private static let paths = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: capacity)
    nonisolated(unsafe) private static let folders = UnsafeMutablePointer<Bool>.allocate(capacity: capacity)
    nonisolated(unsafe) private static var count = 0
    nonisolated(unsafe) private static var installed = false

    /// Removes `path` (a file, or with `folder` an empty folder) should setup end before `forget(path)`.
    static func register(_ path: String, folder: Bool = false) {
        // The storage exists before a handler can read it (a lazy initialisation is no signal-safe thing).
        _ = (paths, folders)
        installHandlers()
        var mask = blockedSignals()
        pthread_sigmask(SIG_BLOCK, &mask, nil)
        defer { pthread_sigmask(SIG_UNBLOCK, &mask, nil) }
        guard count < capacity else { return }
        paths[count] = strdup(path)
        folders[count] = folder
        count += 1
    }

    /// `path` is setup's result now (or gone): it stays.
    static func forget(_ path: String) {
        var mask = blockedSignals()
        pthread_sigmask(SIG_BLOCK, &mask, nil)
        defer { pthread_sigmask(SIG_UNBLOCK, &mask, nil) }
        for index in 0..<count where paths[index].map({ String(cString: $0) }) == path {
            free(paths[index])
            paths[index] = nil
        }
    }

    /// Removes everything registered and not forgotten (setup failed).
    static func removeAll() {
        var mask = blockedSignals()
        pthread_sigmask(SIG_BLOCK, &mask, nil)
        defer { pthread_sigmask(SIG_UNBLOCK, &mask, nil) }
        removeRegistered()
        for index in 0..<count {
            free(paths[index])
            paths[index] = nil
        }
    }

    /// Async-signal-safe: unlink and rmdir, files before the folders that hold them.
    private static func removeRegistered() {
        for folderPass in [false, true] {
            for index in 0..<count where folders[index] == folderPass {
                guard let path = paths[index] else { continue }
                if folderPass { rmdir(path) } else { unlink(path) }
            }
        }
    }

    private static func blockedSignals() -> sigset_t {
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&mask, signal) }
        return mask
    }

    private static func installHandlers() {
        guard !installed else { return }
        installed = true
        for signal in [SIGINT, SIGTERM, SIGHUP] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { received in
                SetupCleanup.removeRegistered()
                _exit(128 + received)
            }
            sigemptyset(&action.sa_mask)
            sigaction(signal, &action, nil)
        }
    }
}
