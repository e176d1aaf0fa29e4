import EventLoop
#if canImport(Glibc)
import Glibc
#endif

/// Replaces a file whole, so that a reader (the node exporter's textfile
/// collector) sees the old text or the new, never half of one: the text
/// goes to a temporary file of its own in the same folder — made with
/// `O_CREAT|O_EXCL|O_NOFOLLOW` (a link planted there is never followed, a
/// file someone else made never reused), readable by all (0644 whatever the
/// umask: it is made here) — and is renamed over the file. No fsync: what a
/// power cut loses is written again at the next change, and a flush a
/// minute would wake the disk. Its temporary name (`.NAME.PID.tmp`) never ends in `.prom`.
public struct AtomicFile: Sendable {
    public let path: String
    public let folder: String
    private let temporary: String

    public init(path: String) {
        self.path = path
        let slash = path.lastIndex(of: "/") ?? path.startIndex
        folder = slash == path.startIndex ? "/" : String(path[..<slash])
        let name = path[path.index(after: slash)...]
        temporary = (folder == "/" ? "" : folder) + "/.\(name).\(getpid()).tmp"
    }

    /// Writes `text` in place of the file.
    public func write(_ text: String) throws(SystemError) {
        var descriptor: Int32
        do {
            descriptor = try create()
        } catch where error.errno == EEXIST {
            // A leftover of an earlier run with this process id: its name is this process's to use.
            try systemCall("unlink \(temporary)") { unlink(temporary) }
            descriptor = try create()
        }
        do {
            defer { close(descriptor) }
            try systemCall("chmod \(temporary)") { fchmod(descriptor, 0o644) }
            var bytes = Array(text.utf8)[...]
            while !bytes.isEmpty {
                let written = try systemCall("write \(temporary)") { bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) } }
                bytes = bytes.dropFirst(written)
            }
        } catch {
            unlink(temporary)
            throw error
        }
        do {
            try systemCall("rename \(temporary) to \(path)") { rename(temporary, path) }
        } catch {
            unlink(temporary)
            throw error
        }
    }

    /// Removes the file (a link in its place is removed, never followed).
    public func remove() { unlink(path) }

    private func create() throws(SystemError) -> Int32 {
        try systemCall("create \(temporary)") { open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644) }
    }
}
