#if canImport(Glibc)
import Glibc
#endif

/// Readiness of a file descriptor, as an event loop reports it.
public struct IOEvents: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let readable = IOEvents(rawValue: 1)
    public static let writable = IOEvents(rawValue: 2)
    /// An error or hang-up on the descriptor: always reported, never asked for.
    public static let hangUp = IOEvents(rawValue: 4)
}

/// Interest in one file descriptor, as registered with an `EventScheduler`.
public protocol IOWatch: AnyObject {
    /// What the watch waits for now (empty: registered but asleep).
    var events: IOEvents { get }
    /// Waits for `events` from now on (on the scheduler).
    func update(_ events: IOEvents)
    /// Stops watching for good (on the scheduler); the handler is not called again.
    func cancel()
}

/// A one-shot timer on the suspend-aware clock (`BootClock`): a deadline set
/// before a suspend fires right after the resume, not an uptime later.
public protocol LoopTimer: AnyObject {
    /// Fires once at `deadline` (on `BootClock`), replacing any earlier arming; one in the past fires at once.
    func arm(at deadline: Duration)
    /// Fires once `delay` from now (its scheduler's now).
    func arm(after delay: Duration)
    /// Stops it from firing until armed again.
    func disarm()
}

/// Where callbacks run: one thread (or serial queue) that owns the libraries'
/// handles and every object driven by them. The daemon runs on an `EventLoop`;
/// the command line and tests may use a dispatch queue (the `DispatchLoop` module).
///
/// Watches and timers are made and changed only on the scheduler
/// (`isCurrent`); `execute` and `sync` may be called from anywhere.
public protocol EventScheduler: AnyObject, Sendable {
    /// Now on this scheduler's clock: `BootClock` for the real loops, a
    /// virtual clock for `ManualLoop`.
    var now: Duration { get }
    /// The wall clock now (seconds since the Unix epoch): the real one's
    /// for the real loops, a virtual one for `ManualLoop` — the one port
    /// through which the daemon's shell reads the time of day.
    var wallClock: Double { get }
    /// True when running on this scheduler.
    var isCurrent: Bool { get }
    /// Runs `work` on the scheduler soon, after what is running now.
    func execute(_ work: @escaping @Sendable () -> Void)
    /// Runs `work` on the scheduler and waits for it (directly when already on it).
    func sync<T>(_ work: () throws -> T) rethrows -> T
    /// Calls `handler` with what is ready whenever `descriptor` is ready for `events`.
    func watch(_ descriptor: Int32, for events: IOEvents, _ handler: @escaping (IOEvents) -> Void) -> any IOWatch
    /// A timer that calls `fired` on the scheduler; made disarmed.
    func makeTimer(_ fired: @escaping () -> Void) -> any LoopTimer
}

extension EventScheduler {
    public var wallClock: Double { WallClock.now() }

    /// Stops the process with a message when not running on this scheduler:
    /// the confinement that makes the objects it drives safe.
    public func preconditionIsCurrent(_ what: @autoclosure () -> String = "this object",
                                      file: StaticString = #fileID, line: UInt = #line) {
        precondition(isCurrent, "\(what()) used off its event loop", file: file, line: line)
    }
}

/// CLOCK_BOOTTIME: monotonic, and counting the time the machine slept.
public enum BootClock {
    /// Now, since boot.
    public static func now() -> Duration {
        var time = timespec()
        clock_gettime(CLOCK_BOOTTIME, &time)
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }

    /// Time spent asleep since boot: CLOCK_BOOTTIME minus CLOCK_MONOTONIC.
    public static func sleptSinceBoot() -> Duration {
        var monotonic = timespec()
        clock_gettime(CLOCK_MONOTONIC, &monotonic)
        return now() - (.seconds(monotonic.tv_sec) + .nanoseconds(monotonic.tv_nsec))
    }
}
