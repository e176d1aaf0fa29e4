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

    @Test func aCallbackMayDisarmOrDropAnotherDueTimerAndTheRestFireOnceInOrder() throws {
        let loop = try EventLoop()
        var fired: [Int] = []
        var timers: [(any LoopTimer)?] = []
        for index in 0..<40 {
            timers.append(loop.makeTimer {
                fired.append(index)
                if index == 1 {
                    timers[2]?.disarm()  // due in the same firing
                    timers[4] = nil
                }
            })
        }
        let now = BootClock.now()
        // All due now, in index order; every third disarmed, every fifth dropped while armed.
        for (index, timer) in timers.enumerated() { timer?.arm(at: now - .milliseconds(40 - index)) }
        for index in stride(from: 0, to: 40, by: 3) { timers[index]?.disarm() }
        for index in stride(from: 0, to: 40, by: 5) { timers[index] = nil }
        loop.runOnce(timeout: .seconds(5))
        let expected = (0..<40).filter { $0 % 3 != 0 && $0 % 5 != 0 && $0 != 2 && $0 != 4 }
        #expect(fired == expected)
        // Re-armed and disarmed in any order, the loop's list stays exact.
        fired = []
        timers[7]?.arm(after: .milliseconds(30))
        timers[8]?.arm(after: .milliseconds(10))
        timers[7]?.disarm()
        timers[11]?.arm(after: .milliseconds(20))
        timers[8]?.arm(after: .milliseconds(40))
        timers[13]?.arm(after: .milliseconds(20))
        timers[13] = nil
        while fired.count < 2 { loop.runOnce(timeout: .seconds(5)) }
        loop.runOnce(timeout: .milliseconds(80))
        #expect(fired == [11, 8])
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

    /// libcurl's "act at once" when a transfer starts: a timer armed for now by a callback fires after a
    /// poll that does not wait, and the timer armed before it still fires at its own deadline, waking once.
    @Test func aTimerArmedForNowByACallbackFiresWithoutWaitingAndTheLaterOneOnTime() throws {
        let loop = try EventLoop()
        var pipeEnds: [Int32] = [0, 0]
        #expect(pipe(&pipeEnds) == 0)
        defer { close(pipeEnds[0]); close(pipeEnds[1]) }
        var fired: [String] = []
        let later = loop.makeTimer { fired.append("later") }
        let laterDeadline = BootClock.now() + .milliseconds(300)
        later.arm(at: laterDeadline)
        let atOnce = loop.makeTimer { fired.append("at once") }
        let watch = loop.watch(pipeEnds[0], for: .readable) { _ in
            var byte: UInt8 = 0
            _ = read(pipeEnds[0], &byte, 1)
            atOnce.arm(after: .zero)
        }
        var one: UInt8 = 1
        #expect(write(pipeEnds[1], &one, 1) == 1)
        loop.runOnce(timeout: .seconds(5))
        #expect(fired.isEmpty, "the pipe's callback ran; nothing fired yet")
        loop.runOnce()
        #expect(fired == ["at once"], "fired in the next turn, without waiting for the later timer")
        let before = loop.wakeUps
        while fired.count < 2 { loop.runOnce() }
        #expect(fired == ["at once", "later"])
        #expect(BootClock.now() >= laterDeadline)
        #expect(loop.wakeUps - before == 1, "woke \(loop.wakeUps - before) times for the later timer")
        watch.cancel()
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


/// The embedded loop unit tests drive components with: virtual time, timers
/// fired in deadline order at their deadlines, work run when told.
@Suite struct ManualLoopTests {
    @Test func advancingFiresTimersInOrderAtTheirDeadlines() {
        let loop = ManualLoop(now: .seconds(100))
        var fired: [(String, Duration)] = []
        let late = loop.makeTimer { fired.append(("late", loop.now)) }
        let early = loop.makeTimer { fired.append(("early", loop.now)) }
        late.arm(after: .seconds(30))
        early.arm(at: .seconds(110))
        loop.advance(by: .seconds(20))
        #expect(fired.map(\.0) == ["early"] && fired.map(\.1) == [.seconds(110)])
        #expect(loop.now == .seconds(120))
        loop.advance(by: .seconds(20))
        #expect(fired.map(\.0) == ["early", "late"] && fired[1].1 == .seconds(130))
    }

    @Test func aTimerThatArmsItselfAgainFiresOnEveryPeriod() {
        let loop = ManualLoop()
        var ticks = 0
        var timer: (any LoopTimer)?
        timer = loop.makeTimer {
            ticks += 1
            timer?.arm(after: .seconds(10))
        }
        timer?.arm(after: .seconds(10))
        loop.advance(by: .seconds(95))
        #expect(ticks == 9)
        timer?.disarm()
        loop.advance(by: .seconds(100))
        #expect(ticks == 9)
    }

    /// Test habits (issue 23): equal deadlines fire in the order they were armed, the loop
    /// is not current on another thread (so a confinement check can fail), and what is left
    /// armed or open can be counted at the end of a test.
    @Test func tiesFireInArmingOrderConfinementHoldsAndLeftoversAreCounted() {
        let loop = ManualLoop()
        var fired: [String] = []
        let names = ["c", "a", "d", "b", "e"]
        let timers = names.map { name in loop.makeTimer { fired.append(name) } }
        for timer in timers { timer.arm(after: .seconds(5)) }
        #expect(loop.armedTimers == 5)
        loop.advance(by: .seconds(5))
        #expect(fired == names, "in arming order, not by chance")
        #expect(loop.armedTimers == 0)
        // Armed again in another order: that order.
        fired = []
        for index in [4, 0, 3, 1, 2] { timers[index].arm(after: .seconds(1)) }
        loop.advance(by: .seconds(1))
        #expect(fired == ["e", "c", "b", "a", "d"])

        #expect(loop.isCurrent)
        final class Answer: @unchecked Sendable {
            // Guard: `done` — the other thread writes `current` before it signals, the test reads after the wait.
            var current = true
            let done = DispatchSemaphore(value: 0)
        }
        let answer = Answer()
        let other = Thread {
            answer.current = loop.isCurrent
            answer.done.signal()
        }
        other.start()
        answer.done.wait()
        #expect(!answer.current, "another thread is not the loop's")

        let watch = loop.watch(9, for: .readable) { _ in }
        #expect(loop.openWatches == 1)
        watch.cancel()
        #expect(loop.openWatches == 0)
        withExtendedLifetime(timers) {}
    }

    @Test func workRunsWhenTheLoopRunsAndReadinessReachesItsWatches() {
        let loop = ManualLoop()
        let seen = Seen()
        loop.execute { seen.items.append("work") }
        #expect(seen.items.isEmpty)
        let watch = loop.watch(7, for: .readable) { seen.items.append("ready \($0.contains(.readable))") }
        loop.ready(7, [.readable, .writable])
        #expect(seen.items == ["work", "ready true"])
        #expect(loop.watched == [7: .readable])
        watch.cancel()
        loop.ready(7, .readable)
        #expect(seen.items.count == 2)
        #expect(loop.watched.isEmpty)
    }
}

/// What a single-threaded test saw (handed to `execute`, which wants a Sendable closure).
private final class Seen: @unchecked Sendable {
    // Confinement: used by one test thread (a ManualLoop runs on its caller's).
    var items: [String] = []
}
