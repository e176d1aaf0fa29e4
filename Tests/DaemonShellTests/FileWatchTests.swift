@testable import DaemonShell
import EventLoop
import Foundation
import Testing
import TestSupport

/// The configuration watch with real inotify on the embedded loop: it holds
/// when its folder is deleted or moved away and made again, and it follows a
/// configuration that is a symbolic link (dotfiles).
@Suite(.desktopBudget) struct FileWatchTests {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-watch-\(UUID().uuidString)").path
    let loop = ManualLoop()

    /// The watch, and a function that hands it what the kernel queued and
    /// returns the paths it reported since the last call.
    func watching(_ paths: [String], programs: [String] = []) throws -> (FileWatch, () -> [String]) {
        final class Reports { var paths: [String] = [] }
        let reports = Reports()
        let watch = try FileWatch(paths: paths, programs: programs, loop: loop) { reports.paths.append($0) }
        let inotify = try #require(loop.watched.first { $0.value.contains(.readable) }?.key)
        return (watch, {
            self.loop.ready(inotify, .readable)
            defer { reports.paths = [] }
            return reports.paths
        })
    }

    /// How many inodes the watch's inotify instance watches, from the kernel's `/proc/self/fdinfo`.
    func watchedInodes() throws -> Int {
        let inotify = try #require(loop.watched.first { $0.value.contains(.readable) }?.key)
        let info = try String(contentsOfFile: "/proc/self/fdinfo/\(inotify)", encoding: .utf8)
        return info.split(separator: "\n").filter { $0.hasPrefix("inotify wd:") }.count
    }

    func write(_ text: String, to path: String) throws {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    @Test func aFolderDeletedAndMadeAgainIsWatchedAgain() throws {
        let folder = root + "/config/ccrelay"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/ccrelay.conf"
        try write("one", to: path)
        let (watch, reported) = try watching([path])
        try FileManager.default.removeItem(atPath: folder)
        #expect(reported() == [path], "the file went with its folder")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        _ = reported()
        try write("two", to: path)
        #expect(reported() == [path], "a change in the folder made again")
        try write("three", to: path)
        #expect(reported() == [path])
        // The folder above is watched only while the folder is missing: once it is back, only it is
        // (the kernel's own list of the watches), so a file another program makes above wakes nothing.
        #expect(try watchedInodes() == 1)
        withExtendedLifetime(watch) {}
        _ = consume watch
        #expect(loop.openWatches == 0, "a released watch leaves nothing on the loop")
    }

    @Test func aFolderMovedAwayIsForgottenAndTheNewOneWatched() throws {
        let folder = root + "/config/ccrelay"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/ccrelay.conf"
        try write("one", to: path)
        let (watch, reported) = try watching([path])
        try FileManager.default.moveItem(atPath: folder, toPath: root + "/config/ccrelay.old")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try write("new", to: path)
        #expect(reported() == [path])
        try write("edited", to: root + "/config/ccrelay.old/ccrelay.conf")
        #expect(reported().isEmpty, "the old folder is not the configuration any more")
        try write("edited", to: path)
        #expect(reported() == [path])
        withExtendedLifetime(watch) {}
    }

    @Test func aConfigurationThatIsALinkIsFollowedToItsFile() throws {
        let dotfiles = root + "/dotfiles"
        let folder = root + "/config/ccrelay"
        try FileManager.default.createDirectory(atPath: dotfiles, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try write("one", to: dotfiles + "/ccrelay.conf")
        try write("other", to: dotfiles + "/other.conf")
        let path = folder + "/ccrelay.conf"
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: dotfiles + "/ccrelay.conf")
        let (watch, reported) = try watching([path])
        // An editor saves the file the link points to (by rename, as vim does).
        try write("two", to: dotfiles + "/ccrelay.conf")
        #expect(reported() == [path], "reported as the link's path")
        try write("unrelated", to: root + "/dotfiles/unrelated")
        #expect(reported().isEmpty)
        // The link is pointed at another file: that one is watched from then on.
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: dotfiles + "/other.conf")
        #expect(reported() == [path])
        try write("changed", to: dotfiles + "/other.conf")
        #expect(reported() == [path])
        try write("three", to: dotfiles + "/ccrelay.conf")
        #expect(reported().isEmpty, "the file the link left")
        withExtendedLifetime(watch) {}
    }

    /// The daemon's own program is watched by its inode: a package manager's
    /// replacement (a hard-linked backup, then the new file renamed over) is
    /// reported once the path holds another file, and nothing else in its
    /// folder (/usr/bin changes with every package) reaches the daemon at all.
    @Test func aProgramIsWatchedForBeingReplacedAndItsFolderWakesNothing() throws {
        let folder = root + "/usr/bin"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let program = folder + "/ccrelay-daemon"
        try write("old", to: program)
        let (watch, reported) = try watching([], programs: [program])
        let inotify = try #require(loop.watched.first { $0.value.contains(.readable) }?.key)
        func queued() -> Bool {
            var ready = pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)
            return poll(&ready, 1, 0) == 1
        }
        try write("another program", to: folder + "/other")
        try FileManager.default.removeItem(atPath: folder + "/other")
        #expect(!queued(), "another file in the folder wakes nothing")
        // dpkg: a hard-linked backup of the old file, the new one renamed over it, the backup removed.
        #expect(link(program, program + ".dpkg-tmp") == 0)
        #expect(reported().isEmpty, "the same file at the path")
        try write("new", to: program + ".dpkg-new")
        #expect(rename(program + ".dpkg-new", program) == 0)
        try FileManager.default.removeItem(atPath: program + ".dpkg-tmp")
        #expect(reported() == [program])
        // The new file is watched in turn.
        try write("newer", to: program + ".dpkg-new")
        #expect(rename(program + ".dpkg-new", program) == 0)
        #expect(reported() == [program])
        withExtendedLifetime(watch) {}
    }
}
