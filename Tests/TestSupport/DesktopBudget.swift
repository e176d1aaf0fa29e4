import Testing

/// How many tests that start their own desktop parts (private `dbus-daemon`s,
/// daemons, notification servers, file watches) run at once.
///
/// Each `dbus-daemon` and each ccrelay daemon holds an inotify instance, and
/// a fresh Debian machine allows a user 128 (`fs.inotify.max_user_instances`).
/// Swift Testing starts every test of the run at once, so without a budget
/// about 115 private buses stood at the same moment and the tests that
/// needed one more watch failed. The suites that start such parts carry
/// `.desktopBudget`; at most `DesktopBudget.width` of their tests run at a
/// time, and the rest of the suite (pure and unit tests) runs beside them.
public struct DesktopBudget: TestTrait, SuiteTrait, TestScoping {
    /// Tests holding desktop parts at once: each holds up to three buses and a daemon.
    public static let width = 12

    public var isRecursive: Bool { true }

    /// Once per running test case, never around a suite as a whole (that would hold a place for all of its tests).
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> DesktopBudget? {
        testCase == nil ? nil : self
    }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        await Self.places.take()
        do {
            try await function()
        } catch {
            await Self.places.give()
            throw error
        }
        await Self.places.give()
    }

    static let places = Places(count: width)

    /// A counting semaphore that suspends (never blocks a thread of the pool).
    actor Places {
        private var free: Int
        private var waiting: [CheckedContinuation<Void, Never>] = []

        init(count: Int) { free = count }

        func take() async {
            if free > 0 {
                free -= 1
                return
            }
            await withCheckedContinuation { waiting.append($0) }
        }

        func give() {
            if waiting.isEmpty {
                free += 1
            } else {
                waiting.removeFirst().resume()
            }
        }
    }
}

extension Trait where Self == DesktopBudget {
    /// The test (or every test of the suite) starts desktop parts: it waits for a place in `DesktopBudget`.
    public static var desktopBudget: DesktopBudget { DesktopBudget() }
}
