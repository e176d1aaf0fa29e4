import EventLoop
#if canImport(Glibc)
import Glibc
#endif

/// Tells when one of some files changes: inotify on their folders (editors
/// and `cp` replace files by renaming, which a watch on the file itself would
/// miss), read on the daemon's loop. No polling: nothing wakes the daemon
/// while the files stay as they are.
///
/// The watch holds when the world around the files moves: a folder deleted
/// or moved away and made again (while it is missing, the nearest folder
/// above it is watched for it, and the watches are laid anew after every such
/// event), and a file that is a symbolic link (dotfiles): the folder of the
/// file it points to is watched too, and a change there is reported as a
/// change of the link's path.
///
/// A program file (the daemon's own executable) is watched by its inode
/// instead, for being replaced: a package manager renames the new file over
/// it, which drops the old inode's link count. A folder such as /usr/bin
/// changes whenever any package is installed, and would wake the daemon each time.
final class FileWatch {
    private let descriptor: Int32
    private let paths: [String]
    /// The watched program files' inode watches: the path and the inode it held when laid.
    private var programs: [Int32: (path: String, inode: FileIdentity)] = [:]
    private var watch: (any IOWatch)?
    /// What each inotify watch stands for: names in a watched folder, each
    /// with the path it is reported as, or (for a parent) the names of
    /// watched folders in it.
    private var watched: [Int32: Watched] = [:]

    private struct Watched {
        var folder: String
        /// A file's name in `folder` → the path reported when it changes.
        var files: [String: Set<String>] = [:]
        /// The name of a missing folder's next part, awaited in `folder`.
        var folders: Set<String> = []
    }

    /// A file's device and inode: what stays the same while a path holds the same file.
    struct FileIdentity: Equatable {
        var device: UInt64
        var inode: UInt64

        init?(_ path: String) {
            var status = stat()
            guard stat(path, &status) == 0 else { return nil }
            device = UInt64(status.st_dev)
            inode = UInt64(status.st_ino)
        }
    }

    private static let fileEvents = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_ATTRIB | IN_MOVED_FROM)
    private static let folderEvents = UInt32(IN_DELETE_SELF | IN_MOVE_SELF)
    /// A link count that drops (the file renamed over or removed), or the inode moved or gone.
    private static let programEvents = UInt32(IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF)

    /// Calls `changed` with the path (one of `paths`) on `loop` after each
    /// change: written and closed, moved in, created, removed, its mode
    /// changed, its folder made again, the file a link points to changed;
    /// and with a path of `programs` once another file has taken its place.
    init(paths: [String], programs: [String] = [], loop: any EventScheduler, changed: @escaping (String) -> Void) throws(SystemError) {
        descriptor = try systemCall("inotify_init1") { inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) }
        self.paths = Array(Set(paths)).sorted()
        layWatches()
        for program in Set(programs) { watchProgram(program) }
        let descriptor = descriptor
        watch = loop.watch(descriptor, for: .readable) { [weak self] _ in
            guard let self else { return }
            var buffer = [UInt8](repeating: 0, count: 4096)
            var changedPaths: Set<String> = []
            var moved = false
            while true {
                let count = read(descriptor, &buffer, buffer.count)
                guard count > 0 else { break }
                var offset = 0
                let header = MemoryLayout<inotify_event>.size
                while offset + header <= count {
                    let event = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: inotify_event.self) }
                    let length = Int(event.len)
                    let nameBytes = buffer[(offset + header)..<min(offset + header + length, count)].prefix { $0 != 0 }
                    let name = String(decoding: nameBytes, as: UTF8.self)
                    offset += header + length
                    if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                        // Events were lost: every file may have changed.
                        moved = true
                        changedPaths.formUnion(self.paths)
                        continue
                    }
                    if let program = self.programs[event.wd] {
                        if event.mask & Self.programEvents != 0, let now = FileIdentity(program.path), now != program.inode {
                            // Another file is at the path now: watch that one, report the change.
                            self.programs[event.wd] = nil
                            inotify_rm_watch(descriptor, event.wd)
                            self.watchProgram(program.path)
                            changedPaths.insert(program.path)
                        }
                        continue
                    }
                    guard let entry = self.watched[event.wd] else { continue }
                    if event.mask & (Self.folderEvents | UInt32(IN_IGNORED)) != 0 {
                        // The folder itself went (or moved): what it held is gone from that path.
                        moved = true
                        changedPaths.formUnion(entry.files.values.joined())
                        continue
                    }
                    if entry.folders.contains(name) {
                        moved = true
                    }
                    if let reported = entry.files[name] {
                        changedPaths.formUnion(reported)
                        // A link replaced may point elsewhere now.
                        if self.paths.contains(entry.folder == "/" ? "/" + name : entry.folder + "/" + name) { moved = true }
                    }
                }
            }
            if moved {
                let before = Set(self.watched.values.flatMap { $0.files.values.joined() })
                self.layWatches()
                // A folder made again may already hold the file.
                let after = Set(self.watched.values.flatMap { $0.files.values.joined() })
                changedPaths.formUnion(after.subtracting(before))
            }
            // One call per file for a burst of events (an editor's write, rename, chmod).
            for path in changedPaths.sorted() { changed(path) }
        }
    }

    /// (Re)adds a watch for each file's folder and the folder of the file a
    /// link points to; a folder that is missing is waited for in the nearest
    /// folder above it that exists (only then: a watch on ~/.config itself
    /// would wake the daemon whenever another program made a file there).
    /// Drops the watches no longer wanted (a folder moved away keeps its old watch otherwise).
    private func layWatches() {
        var wanted: [Int32: Watched] = [:]
        func add(_ folder: String, _ mask: UInt32, _ update: (inout Watched) -> Void) -> Bool {
            // IN_MASK_ADD: a folder wanted for two reasons keeps both masks.
            let added = inotify_add_watch(descriptor, folder, mask | UInt32(IN_ONLYDIR | IN_MASK_ADD))
            guard added >= 0 else { return false }
            update(&wanted[added, default: Watched(folder: folder)])
            return true
        }
        for path in paths {
            var targets = [path]
            if let resolved = Self.linkTarget(path), resolved != path { targets.append(resolved) }
            for target in targets {
                let (folder, name) = Self.split(target)
                if add(folder, Self.fileEvents | Self.folderEvents, { $0.files[name, default: []].insert(path) }) { continue }
                // The folder is not there (yet): wait for the next missing part in the nearest folder that is.
                var missing = folder
                while missing != "/" {
                    let (parent, child) = Self.split(missing)
                    if add(parent, UInt32(IN_CREATE | IN_MOVED_TO) | Self.folderEvents, { $0.folders.insert(child) }) { break }
                    missing = parent
                }
            }
        }
        for wd in watched.keys where wanted[wd] == nil { inotify_rm_watch(descriptor, wd) }
        watched = wanted
    }

    /// Watches the file at `path` itself (its inode), for being replaced.
    private func watchProgram(_ path: String) {
        guard let inode = FileIdentity(path) else { return }
        let added = inotify_add_watch(descriptor, path, Self.programEvents)
        guard added >= 0 else { return }
        programs[added] = (path, inode)
    }

    /// Where a symbolic link at `path` finally points, when it is one.
    private static func linkTarget(_ path: String) -> String? {
        var status = stat()
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFLNK else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard let resolved = realpath(path, &buffer) else {
            // A dangling link: watch where it says it points, so its target's arrival is seen.
            var target = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink(path, &target, target.count - 1)
            guard count > 0 else { return nil }
            let text = String(decoding: target.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return text.hasPrefix("/") ? text : split(path).folder + "/" + text
        }
        return String(cString: resolved)
    }

    private static func split(_ path: String) -> (folder: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let folder = slash == path.startIndex ? "/" : String(path[..<slash])
        return (folder, String(path[path.index(after: slash)...]))
    }

    deinit {
        watch?.cancel()
        close(descriptor)
    }
}
