#if canImport(Glibc)
import Glibc
#endif

/// An `EventScheduler` that runs only when told, on a virtual clock — the
/// embedded loop that unit tests drive a component with (as swift-nio's
/// `EmbeddedEventLoop` is to its channels): `advance(by:)` moves time and
/// fires the timers that fall due, in deadline order, running the work they
/// hand in; `ready(_:_:)` reports a descriptor ready to its watches.
///
/// One thread only: the thread that first uses it is its thread — `isCurrent`
/// is false anywhere else, so a confinement check fails as it would on the
/// real loop — and `sync` runs its work at once. Timers due at the same
/// instant fire in the order they were armed (as swift-nio's embedded loop
/// does), and `armedTimers`/`openWatches` tell what a test left behind.
public final class ManualLoop: EventScheduler, @unchecked Sendable {
    // Confinement: used by one test thread; nothing here is locked.
    public private(set) var now: Duration
    private var work: [() -> Void] = []
    private var timers: [ObjectIdentifier: WeakManualTimer] = [:]
    private var watches: [ManualWatch] = []
    private var armings: UInt64 = 0
    private var thread: pthread_t?

    /// The wall clock when the virtual clock read `wallClockSetAt`: it runs with `advance(by:)`, and a test may set it (a jump).
    private var wallClockBase: Double
    private var wallClockSetAt: Duration

    /// A loop whose clock starts at `now` (since a virtual boot), the wall clock at `wallClock` (the real time by default).
    public init(now: Duration = .seconds(1_000), wallClock: Double = WallClock.now()) {
        self.now = now
        wallClockBase = wallClock
        wallClockSetAt = now
    }

    public var wallClock: Double {
        let elapsed = now - wallClockSetAt
        return wallClockBase + Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// Sets the wall clock (as a user or NTP would): the virtual boot clock does not move.
    public func setWallClock(_ seconds: Double) {
        wallClockBase = seconds
        wallClockSetAt = now
    }

    public var isCurrent: Bool {
        guard let thread else { return true }
        return pthread_equal(thread, pthread_self()) != 0
    }

    /// Binds the loop to the calling thread at its first use.
    private func used() {
        if thread == nil { thread = pthread_self() }
    }

    /// How many timers are armed now (a component that was stopped should leave none).
    public var armedTimers: Int { timers.values.filter { $0.timer?.deadline != nil }.count }

    /// How many watches are open now (not cancelled).
    public var openWatches: Int { watches.filter { !$0.cancelled }.count }

    public func execute(_ work: @escaping @Sendable () -> Void) { self.work.append(work) }


    public func sync<T>(_ work: () throws -> T) rethrows -> T { try work() }

    public func watch(_ descriptor: Int32, for events: IOEvents, _ handler: @escaping (IOEvents) -> Void) -> any IOWatch {
        used()
        let watch = ManualWatch(descriptor: descriptor, events: events, handler: handler)
        watches.append(watch)
        return watch
    }

    public func makeTimer(_ fired: @escaping () -> Void) -> any LoopTimer {
        used()
        return ManualTimer(loop: self, fired: fired)
    }

    // MARK: Driving it

    /// Runs the work handed in, until none is left.
    public func runPending() {
        used()
        while !work.isEmpty {
            let batch = work
            work.removeAll()
            for item in batch { item() }
        }
    }

    /// The earliest armed timer's deadline.
    public var nextDeadline: Duration? { timers.values.compactMap { $0.timer?.deadline }.min() }

    /// Moves the clock forward by `step`, firing every timer that falls due on
    /// the way at its own deadline (and the work each hands in) before the next.
    public func advance(by step: Duration) {
        let end = now + step
        runPending()
        while let due = nextDeadline, due <= end {
            now = max(now, due)
            // Of the timers due now, the one armed first.
            let timer = timers.values.compactMap(\.timer).filter { $0.deadline == due }.min { $0.arming < $1.arming }!
            timer.fire()
            runPending()
        }
        now = end
    }

    /// Reports `descriptor` ready for `events` to the watches that wait for them
    /// (after the work already handed in).
    public func ready(_ descriptor: Int32, _ events: IOEvents) {
        // As the real loop does: what was handed in runs before it waits again.
        runPending()
        for watch in watches where watch.descriptor == descriptor && !watch.cancelled {
            let relevant = events.intersection(watch.events.union(.hangUp))
            if !relevant.isEmpty { watch.handler(relevant) }
        }
        runPending()
    }

    /// The descriptors watched now, with what for.
    public var watched: [Int32: IOEvents] {
        var table: [Int32: IOEvents] = [:]
        for watch in watches where !watch.cancelled && !watch.events.isEmpty {
            table[watch.descriptor, default: []].formUnion(watch.events)
        }
        return table
    }

    /// Registers an armed timer; its place among timers due at the same instant.
    fileprivate func armed(_ timer: ManualTimer) -> UInt64 {
        timers[ObjectIdentifier(timer)] = WeakManualTimer(timer: timer)
        armings += 1
        return armings
    }
    fileprivate func disarmed(_ timer: ObjectIdentifier) { timers[timer] = nil }
}

private final class ManualTimer: LoopTimer {
    private weak var loop: ManualLoop?
    private let fired: () -> Void
    private(set) var deadline: Duration?
    /// When it was armed, among all the loop's armings.
    private(set) var arming: UInt64 = 0

    init(loop: ManualLoop, fired: @escaping () -> Void) {
        self.loop = loop
        self.fired = fired
    }

    func arm(at deadline: Duration) {
        self.deadline = deadline
        arming = loop?.armed(self) ?? 0
    }

    func arm(after delay: Duration) { arm(at: (loop?.now ?? .zero) + delay) }

    func disarm() {
        deadline = nil
        loop?.disarmed(ObjectIdentifier(self))
    }

    /// Fires once (a one-shot timer is disarmed first, so it may arm itself again).
    func fire() {
        disarm()
        fired()
    }

    deinit { loop?.disarmed(ObjectIdentifier(self)) }
}

private struct WeakManualTimer {
    weak var timer: ManualTimer?
}

private final class ManualWatch: IOWatch {
    let descriptor: Int32
    private(set) var events: IOEvents
    let handler: (IOEvents) -> Void
    private(set) var cancelled = false

    init(descriptor: Int32, events: IOEvents, handler: @escaping (IOEvents) -> Void) {
        self.descriptor = descriptor
        self.events = events
        self.handler = handler
    }

    func update(_ events: IOEvents) { if !cancelled { self.events = events } }
    func cancel() { cancelled = true }
}
