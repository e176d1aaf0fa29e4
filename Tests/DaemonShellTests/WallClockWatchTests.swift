@testable import DaemonShell
import EventLoop
import Foundation
import Testing
import TestSupport

/// A wall clock that is set (issue 31.14: quiet hours jumped over held
/// their alerts until the monotonic timer fired) is heard at once, with the
/// real kernel timer, and never otherwise.
@Suite struct WallClockWatchTests {
    @Test(.enabled(if: getuid() == 0, "setting the clock (to the time it has) needs root"))
    func settingTheClockIsHeardAndNothingElseWakesIt() async throws {
        let thread = EventLoopThread()
        defer { thread.stop() }
        let heard = LockedBox(0)
        let watch = thread.loop.sync { WallClockWatch(loop: thread.loop) { heard.update { $0 += 1 } } }
        defer { thread.loop.sync { withExtendedLifetime(watch) {} } }
        #expect(watch != nil)
        try await Task.sleep(for: .milliseconds(300))
        #expect(heard.get() == 0, "quiet while nobody sets the clock")
        // Set to what it reads: a jump of nothing, but a set all the same.
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        guard clock_settime(CLOCK_REALTIME, &now) == 0 else {
            // A container that keeps CAP_SYS_TIME from root: nothing here can set the clock, so nothing to hear.
            #expect(errno == EPERM)
            return
        }
        #expect(await eventually(timeout: .seconds(5)) { heard.get() == 1 })
        clock_gettime(CLOCK_REALTIME, &now)
        #expect(clock_settime(CLOCK_REALTIME, &now) == 0)
        #expect(await eventually(timeout: .seconds(5)) { heard.get() == 2 }, "armed again after each")
    }
}
