import EventLoop
import Foundation
import Testing

/// The daemon's loop on its own: timers on the boot clock, merged descriptor
/// registrations checked in the kernel's own table, work handed in from other
/// threads, and no wake-up that nothing asked for.
@Suite struct EventLoopTests {
    @Test func timersFireOnceInDeadlineOrderAndNotBefore() throws {
        let loop = try EventLoop()
        var fired: [String] = []
        let start = BootClock.now()
        let late = loop.makeTimer { fired.append("late") }
        let early = loop.makeTimer { fired.append("early") }
        let never = loop.makeTimer { fired.append("never") }
        late.arm(after: .milliseconds(60))
        early.arm(after: .milliseconds(20))
        never.arm(after: .milliseconds(30))
        never.disarm()
        while fired.count < 2 { loop.runOnce(timeout: .seconds(5)) }
        #expect(fired == ["early", "late"])
        #expect(BootClock.now() - start >= .milliseconds(60))
        loop.runOnce(timeout: .milliseconds(100))
        #expect(fired == ["early", "late"], "a one-shot timer fired again")
    }

    @Test func aTimerInThePastFiresAtOnceAndADroppedOneNever() throws {
        let loop = try EventLoop()
        var fired: [String] = []
        var dropped: (any LoopTimer)? = loop.makeTimer { fired.append("dropped") }
        dropped?.arm(after: .milliseconds(10))
        dropped = nil
        let past = loop.makeTimer { fired.append("past") }
        past.arm(at: .zero)
        loop.runOnce(timeout: .seconds(5))
        loop.runOnce(timeout: .milliseconds(50))
        #expect(fired == ["past"])
        _ = dropped
    }

    @Test func rearmingReplacesTheDeadline() throws {
        let loop = try EventLoop()
        var firedAt: Duration?
        let timer = loop.makeTimer { firedAt = BootClock.now() }
        let start = BootClock.now()
        timer.arm(after: .milliseconds(10))
        timer.arm(after: .milliseconds(80))
        while firedAt == nil { loop.runOnce(timeout: .seconds(5)) }
        #expect(firedAt! - start >= .milliseconds(80))
    }

    @Test func watchesOfOneDescriptorMergeIntoOneKernelRegistration() throws {
        let loop = try EventLoop()
        var pair: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { close(pair[0]); close(pair[1]) }
        var seen: [IOEvents] = []
        let reading = loop.watch(pair[0], for: .readable) { seen.append($0) }
        let writing = loop.watch(pair[0], for: .writable) { seen.append($0) }
        #expect(try kernelRegistrations(of: loop) == [pair[0]: "1d"], "EPOLLIN|EPOLLOUT|EPOLLERR|EPOLLHUP, once")
        loop.runOnce(timeout: .seconds(1))
        #expect(seen == [.writable], "a connected socket is writable, not readable")
        writing.update([])
        #expect(try kernelRegistrations(of: loop) == [pair[0]: "19"], "EPOLLIN|EPOLLERR|EPOLLHUP")
        #expect(loop.registeredDescriptors == [pair[0]: .readable])
        seen = []
        _ = write(pair[1], "x", 1)
        loop.runOnce(timeout: .seconds(1))
        #expect(seen == [.readable])
        reading.cancel()
        writing.cancel()
        #expect(try kernelRegistrations(of: loop).isEmpty)
        #expect(loop.registeredDescriptors.isEmpty)
    }

    @Test func aHangUpReachesEveryWatchOfTheDescriptor() throws {
        let loop = try EventLoop()
        var pipeEnds: [Int32] = [0, 0]
        #expect(pipe(&pipeEnds) == 0)
        defer { close(pipeEnds[0]) }
        var seen: IOEvents = []
        let watch = loop.watch(pipeEnds[0], for: .readable) { seen.formUnion($0) }
        close(pipeEnds[1])
        loop.runOnce(timeout: .seconds(1))
        #expect(seen.contains(.hangUp))
        watch.cancel()
    }

    @Test func anIdleLoopDoesNotWakeUntilItsTimer() throws {
        let loop = try EventLoop()
        var pipeEnds: [Int32] = [0, 0]
        #expect(pipe(&pipeEnds) == 0)
        defer { close(pipeEnds[0]); close(pipeEnds[1]) }
        let quiet = loop.watch(pipeEnds[0], for: .readable) { _ in Issue.record("an idle pipe was reported ready") }
        var fired = false
        let timer = loop.makeTimer { fired = true }
        timer.arm(after: .milliseconds(300))
        let before = loop.wakeUps
        while !fired { loop.runOnce() }
        #expect(loop.wakeUps - before == 1, "woke \(loop.wakeUps - before) times for one timer")
        quiet.cancel()
    }

    @Test func workHandedInFromAnotherThreadWakesTheLoop() throws {
        let running = EventLoopThread()
        let loop = running.loop
        let answer = loop.sync { 6 * 7 }
        #expect(answer == 42)
        struct Refusal: Error {}
        #expect(throws: Refusal.self) { try loop.sync { throw Refusal() } }
        let onLoop = loop.sync { loop.isCurrent }
        #expect(onLoop)
        #expect(!loop.isCurrent)
        running.stop()
    }

    @Test func systemCallFailuresNameTheCallAndErrno() {
        #expect(throws: SystemError("close 12345", errno: EBADF)) { try systemCall("close 12345") { close(12345) } }
        #expect(SystemError("rename /x", errno: ENOENT).description == "rename /x: No such file or directory")
    }

    /// The descriptors in the kernel's epoll table (from /proc/self/fdinfo) and their event masks, in hex.
    private func kernelRegistrations(of loop: EventLoop) throws -> [Int32: String] {
        let (epoll, own) = loop.descriptors
        let text = try String(contentsOfFile: "/proc/self/fdinfo/\(epoll)", encoding: .utf8)
        var table: [Int32: String] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("tfd:") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let fd = Int32(fields[1]), !own.contains(fd), let mask = fields.firstIndex(of: "events:").map({ fields[$0 + 1] }) else { continue }
            table[fd] = String(mask)
        }
        return table
    }
}

