import EventLoop
#if canImport(Glibc)
import Glibc
#endif

/// Tells when one of some files changes: inotify on their folders (editors
/// and `cp` replace files by renaming, which a watch on the file itself would
/// miss), read on the daemon's loop. No polling: nothing wakes the daemon
/// while the files stay as they are.
final class FileWatch {
    private let descriptor: Int32
    private var watch: (any IOWatch)?

    /// Calls `changed` with the path (one of `paths`) on `loop` after each
    /// change: written and closed, moved in, created, removed, its mode changed.
    init(paths: [String], loop: any EventScheduler, changed: @escaping (String) -> Void) throws(SystemError) {
        descriptor = try systemCall("inotify_init1") { inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) }
        var folders: [Int32: (folder: String, names: Set<String>)] = [:]
        for path in Set(paths) {
            guard let slash = path.lastIndex(of: "/") else { continue }
            let folder = slash == path.startIndex ? "/" : String(path[..<slash])
            let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_ATTRIB)
            let folderWatch = inotify_add_watch(descriptor, folder, mask)
            guard folderWatch >= 0 else { continue }
            folders[folderWatch, default: (folder, [])].names.insert(String(path[path.index(after: slash)...]))
        }
        let descriptor = descriptor
        let watched = folders
        watch = loop.watch(descriptor, for: .readable) { _ in
            var buffer = [UInt8](repeating: 0, count: 4096)
            var changedPaths: Set<String> = []
            while true {
                let count = read(descriptor, &buffer, buffer.count)
                guard count > 0 else { break }
                var offset = 0
                let header = MemoryLayout<inotify_event>.size
                while offset + header <= count {
                    let (watch, length) = buffer.withUnsafeBytes { raw in
                        (raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self).wd,
                         Int(raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self).len))
                    }
                    let nameBytes = buffer[(offset + header)..<min(offset + header + length, count)].prefix { $0 != 0 }
                    let name = String(decoding: nameBytes, as: UTF8.self)
                    if let entry = watched[watch], entry.names.contains(name) {
                        changedPaths.insert(entry.folder == "/" ? "/" + name : entry.folder + "/" + name)
                    }
                    offset += header + length
                }
            }
            // One call per file for a burst of events (an editor's write, rename, chmod).
            for path in changedPaths.sorted() { changed(path) }
        }
    }

    deinit {
        watch?.cancel()
        close(descriptor)
    }
}
