import CoreVocabulary
import EventLoop
#if canImport(Glibc)
import Glibc
#endif

/// Reads a small file the user named (a configuration) without surprises:
/// opened non-blocking (a FIFO never hangs the caller), regular files only,
/// at most `limit` bytes, every failure with its reason.
public enum BoundedFile {
    public enum Problem: Error, CustomStringConvertible, Sendable {
        /// It does not exist or cannot be opened (the reason from the system).
        case missing(String)
        /// It is no regular file: its mode, whose type bits say what it is.
        case notRegular(mode_t)
        case tooLarge(Int)
        case unreadable(String)

        /// The problem in `localize`'s language (the system's reasons are
        /// glibc's, in the language of the process's locale).
        public func sentence(_ localize: Localizer) -> String {
            switch self {
            case .missing(let reason), .unreadable(let reason): reason
            case .notRegular(let mode): BoundedFile.notRegular(mode, localize)
            case .tooLarge(let limit): TextTemplate.fill(localize("it is larger than %s KiB"), String(limit / 1024))
            }
        }

        public var description: String { sentence(.english) }
    }

    public static func read(_ path: String, limit: Int) -> Result<[UInt8], Problem> {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { return .failure(.missing(SystemError.reason(errno))) }
        return read(fd, limit: limit)
    }

    /// As `read`, but following no symbolic link anywhere in `path` (an
    /// absolute path; `..` refused): each folder on the way and the file are
    /// opened relative to the one before, `O_NOFOLLOW`. For root reading a
    /// file someone else named, in folders they control: a link they planted
    /// (to /etc/shadow) is refused, not read.
    public static func readFollowingNoLinks(_ path: String, limit: Int) -> Result<[UInt8], Problem> {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard path.hasPrefix("/"), let name = parts.last, !parts.contains("..") else {
            return .failure(.missing("it is not an absolute path without '..'"))
        }
        var folder = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else { return .failure(.missing(SystemError.reason(errno))) }
        for part in parts.dropLast() where part != "." {
            let next = openat(folder, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            let reason = errno
            close(folder)
            guard next >= 0 else { return .failure(.missing(reason == ELOOP || reason == ENOTDIR ? "\(part) on its way is a symbolic link or no folder" : SystemError.reason(reason))) }
            folder = next
        }
        let fd = openat(folder, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        let reason = errno
        close(folder)
        guard fd >= 0 else { return .failure(.missing(reason == ELOOP ? "it is a symbolic link" : SystemError.reason(reason))) }
        return read(fd, limit: limit)
    }

    /// Reads the open file `fd` (closing it): a regular file of at most `limit` bytes.
    private static func read(_ fd: Int32, limit: Int) -> Result<[UInt8], Problem> {
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return .failure(.unreadable(SystemError.reason(errno))) }
        guard info.st_mode & S_IFMT == S_IFREG else { return .failure(.notRegular(info.st_mode)) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = Glibc.read(fd, &chunk, chunk.count)
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(.unreadable(SystemError.reason(errno)))
            }
            if count == 0 { return .success(bytes) }
            bytes += chunk.prefix(count)
            if bytes.count > limit { return .failure(.tooLarge(limit)) }
        }
    }

    /// The permission bits of `path`, or nil when it cannot be looked at.
    public static func mode(_ path: String) -> mode_t? {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mode : nil
    }

    static func notRegular(_ mode: mode_t, _ localize: Localizer) -> String {
        switch mode & S_IFMT {
        case S_IFDIR: localize("it is a directory, not a regular file")
        case S_IFIFO: localize("it is a FIFO, not a regular file")
        case S_IFSOCK: localize("it is a socket, not a regular file")
        case S_IFCHR: localize("it is a character device, not a regular file")
        case S_IFBLK: localize("it is a block device, not a regular file")
        default: localize("it is not a regular file")
        }
    }
}
