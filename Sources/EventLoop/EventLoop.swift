import CLinux
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's event loop: one thread waiting in `epoll_wait` over every
/// descriptor that is watched, one `timerfd` on CLOCK_BOOTTIME holding the
/// earliest timer's absolute deadline, and an `eventfd` that other threads
/// use to hand it work. Nothing wakes it but a ready descriptor, a due
/// timer or work handed in: no periodic tick, no helper threads.
///
/// Watches of one descriptor (libdbus has one per direction) merge into one
/// epoll registration; level-triggered, as libdbus and libcurl expect.
///
/// Confinement (why `@unchecked Sendable` is sound): everything but
/// `handedIn` is used only on the loop's thread (`isCurrent`); `handedIn` is
/// behind its mutex.
public final class EventLoop: EventScheduler, @unchecked Sendable {
    private let epoll: Int32
    private let wakeUp: Int32
    private let timerDescriptor: Int32
    private var owner: pthread_t
    private var watches: [Int32: [EpollWatch]] = [:]
    private var registered: [Int32: UInt32] = [:]
    /// Armed timers, not retained: a timer its owner dropped never fires (its
    /// deinit takes it off the list, as disarming does). A plain array: a few
    /// timers at most, walked without allocating on the keep-alive path.
    private var armedTimers: [Unmanaged<EpollTimer>] = []
    /// The due timers of one firing, kept for its capacity.
    private var dueTimers: [EpollTimer] = []
    /// The deadline the timerfd holds now; nil while disarmed.
    private var timerfdDeadline: Duration?
    private var timersChanged = false
    private var local: [() -> Void] = []
    private let handedIn = Mutex<[@Sendable () -> Void]>([])
    private var stopping = false
    /// What `epoll_wait` fills: kept, not allocated with every wake-up.
    private var ready = [epoll_event](repeating: epoll_event(), count: 32)
    /// How many times `epoll_wait` returned (for tests and benchmarks).
    public private(set) var wakeUps = 0

    /// Creates the loop, owned by the calling thread until `run` is called on another.
    public init() throws(SystemError) {
        epoll = try systemCall("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
        wakeUp = try systemCall("eventfd") { eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK)) }
        timerDescriptor = try systemCall("timerfd_create CLOCK_BOOTTIME") {
            timerfd_create(CLOCK_BOOTTIME, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
        }
        owner = pthread_self()
        try register(wakeUp, mask: UInt32(EPOLLIN.rawValue))
        try register(timerDescriptor, mask: UInt32(EPOLLIN.rawValue))
    }

    deinit {
        close(timerDescriptor)
        close(wakeUp)
        close(epoll)
    }

    public var isCurrent: Bool { pthread_equal(pthread_self(), owner) != 0 }

    public var now: Duration { BootClock.now() }

    // MARK: Running

    /// Runs on the calling thread until `stop` (which may come from a callback).
    public func run() {
        owner = pthread_self()
        stopping = false
        while !stopping { runOnce() }
    }

    /// Makes `run` return once the current callback is over.
    public func stop() {
        if isCurrent { stopping = true } else { execute { [self] in stopping = true } }
    }

    /// Runs what is handed in, then waits once (at most `timeout`, nil for
    /// as long as it takes) and handles what became ready.
    public func runOnce(timeout: Duration? = nil) {
        runHandedIn()
        if stopping { return }
        // A timer armed for now while the last callbacks ran (libcurl's "act at once" when a
        // transfer starts) fires after a poll that does not wait, as libcurl's own loops do:
        // no timerfd set to the past, woken by and read.
        var timerDue = false
        if timersChanged {
            let earliest = earliestDeadline()
            timerDue = earliest.map { $0 <= BootClock.now() } ?? false
            if !timerDue { setTimerDescriptor(to: earliest) }
        }
        let milliseconds =
            timerDue ? 0 : timeout.map { Int32(clamping: $0.components.seconds * 1000 + $0.components.attoseconds / 1_000_000_000_000_000) } ?? -1
        let count = epoll_wait(epoll, &ready, Int32(ready.count), milliseconds)
        wakeUps += 1
        defer {
            if timerDue && !stopping {
                fireDueTimers()
                runHandedIn()
            }
        }
        guard count > 0 else { return }
        for event in ready.prefix(Int(count)) {
            let descriptor = event.data.fd
            if descriptor == wakeUp {
                var value: UInt64 = 0
                _ = read(wakeUp, &value, 8)
            } else if descriptor == timerDescriptor {
                var expirations: UInt64 = 0
                _ = read(timerDescriptor, &expirations, 8)
                timerfdDeadline = nil
                fireDueTimers()
            } else {
                deliver(event.events, to: descriptor)
            }
            runHandedIn()
        }
    }

    // MARK: Work handed in

    public func execute(_ work: @escaping @Sendable () -> Void) {
        if isCurrent {
            local.append(work)
            return
        }
        handedIn.withLock { $0.append(work) }
        var one: UInt64 = 1
        _ = write(wakeUp, &one, 8)
    }

    public func sync<T>(_ work: () throws -> T) rethrows -> T {
        try syncHelper(work, rescue: { throw $0 })
    }

    /// `sync`'s body: a failure of `work` on the loop is rethrown here through `rescue`.
    private func syncHelper<T>(_ work: () throws -> T, rescue: (any Error) throws -> T) rethrows -> T {
        if isCurrent { return try work() }
        let result: Result<T, any Error> = withoutActuallyEscaping(work) { work in
            // The loop drops its reference to `work` (through the job) before
            // handing back the result, so it does not outlive this call.
            let job = SyncJob(work)
            execute { job.run() }
            return job.result()
        }
        switch result {
        case .success(let value): return value
        case .failure(let error): return try rescue(error)
        }
    }

    private func runHandedIn() {
        while true {
            let batch = handedIn.withLock { list in
                defer { list.removeAll() }
                return list
            }
            let mine = local
            local.removeAll()
            if batch.isEmpty && mine.isEmpty { return }
            for work in mine { work() }
            for work in batch { work() }
        }
    }

    // MARK: Descriptors

    public func watch(_ descriptor: Int32, for events: IOEvents, _ handler: @escaping (IOEvents) -> Void) -> any IOWatch {
        preconditionIsCurrent("an event loop's watch")
        let watch = EpollWatch(descriptor: descriptor, events: events, handler: handler, loop: self)
        watches[descriptor, default: []].append(watch)
        refresh(descriptor)
        return watch
    }

    /// Makes the epoll registration of `descriptor` the union of its watches.
    fileprivate func refresh(_ descriptor: Int32) {
        let live = (watches[descriptor] ?? []).filter { !$0.cancelled }
        watches[descriptor] = live.isEmpty ? nil : live
        var mask: UInt32 = 0
        for watch in live {
            if watch.events.contains(.readable) { mask |= UInt32(EPOLLIN.rawValue) }
            if watch.events.contains(.writable) { mask |= UInt32(EPOLLOUT.rawValue) }
        }
        let current = registered[descriptor]
        if mask == 0 {
            guard current != nil else { return }
            registered[descriptor] = nil
            // Fails harmlessly when the owner closed the descriptor first (epoll dropped it then).
            _ = epoll_ctl(epoll, EPOLL_CTL_DEL, descriptor, nil)
            return
        }
        guard mask != current else { return }
        do {
            try register(descriptor, mask: mask, known: current != nil)
            registered[descriptor] = mask
        } catch {
            // Not a pollable descriptor (or closed): nothing will ever be ready on it.
            registered[descriptor] = nil
        }
    }

    private func register(_ descriptor: Int32, mask: UInt32, known: Bool = false) throws(SystemError) {
        var event = epoll_event()
        event.events = mask
        event.data.fd = descriptor
        let first = known ? EPOLL_CTL_MOD : EPOLL_CTL_ADD
        if epoll_ctl(epoll, first, descriptor, &event) == 0 { return }
        // The table and the kernel disagree when an owner closed a descriptor
        // and a new one got its number: try the other operation once.
        let code = errno
        guard code == ENOENT || code == EEXIST else { throw SystemError("epoll_ctl \(descriptor)", errno: code) }
        let second = known ? EPOLL_CTL_ADD : EPOLL_CTL_MOD
        try systemCall("epoll_ctl \(descriptor)") { epoll_ctl(epoll, second, descriptor, &event) }
    }

    private func deliver(_ mask: UInt32, to descriptor: Int32) {
        var ready: IOEvents = []
        if mask & UInt32(EPOLLIN.rawValue) != 0 { ready.insert(.readable) }
        if mask & UInt32(EPOLLOUT.rawValue) != 0 { ready.insert(.writable) }
        if mask & UInt32(EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 { ready.insert(.hangUp) }
        // A handler may cancel or add watches: work on the list as it was.
        for watch in watches[descriptor] ?? [] where !watch.cancelled {
            let relevant = ready.intersection(watch.events.union(.hangUp))
            if !relevant.isEmpty && !watch.events.isEmpty { watch.handler(relevant) }
        }
    }

    // MARK: Timers

    public func makeTimer(_ fired: @escaping () -> Void) -> any LoopTimer {
        EpollTimer(loop: self, fired: fired)
    }

    fileprivate func armed(_ timer: EpollTimer) {
        preconditionIsCurrent("an event loop's timer")
        if !timer.listed {
            armedTimers.append(Unmanaged.passUnretained(timer))
            timer.listed = true
        }
        timersChanged = true
    }

    /// Takes `timer` off the list (also from its deinit).
    fileprivate func disarmed(_ timer: EpollTimer) {
        let identity = Unmanaged.passUnretained(timer).toOpaque()
        guard timer.listed, let index = armedTimers.firstIndex(where: { $0.toOpaque() == identity }) else { return }
        armedTimers.swapAt(index, armedTimers.count - 1)
        armedTimers.removeLast()
        timer.listed = false
        timersChanged = true
    }

    /// Sets the timerfd to the earliest deadline, `earliest` (only when that changed: one syscall per change).
    private func setTimerDescriptor(to earliest: Duration?) {
        timersChanged = false
        guard earliest != timerfdDeadline else { return }
        var spec = itimerspec()
        if let earliest {
            let (seconds, attoseconds) = earliest.components
            spec.it_value.tv_sec = max(Int(seconds), 0)
            spec.it_value.tv_nsec = seconds < 0 ? 0 : Int(attoseconds / 1_000_000_000)
            // All zeros would disarm it: a deadline at boot fires at once instead.
            if spec.it_value.tv_sec == 0 && spec.it_value.tv_nsec == 0 { spec.it_value.tv_nsec = 1 }
        }
        // Fails only for a bad descriptor or value, which would be this code's
        // bug: a timer that silently never fires would stop the keep-alives.
        do throws(SystemError) {
            try systemCall("timerfd_settime") { timerfd_settime(timerDescriptor, earliest == nil ? 0 : Int32(TFD_TIMER_ABSTIME), &spec, nil) }
        } catch {
            preconditionFailure("\(error)")
        }
        timerfdDeadline = earliest
    }

    /// The earliest armed timer's deadline; nil when none is armed.
    private func earliestDeadline() -> Duration? {
        var earliest: Duration?
        for timer in armedTimers {
            if let deadline = timer.takeUnretainedValue().deadline, deadline < earliest ?? .seconds(Int64.max) { earliest = deadline }
        }
        return earliest
    }

    /// Fires the timers due now, earliest first. Each is retained until the
    /// firing is over (a callback may drop another), and skipped when an earlier
    /// callback disarmed, moved or dropped it (then only this list holds it).
    private func fireDueTimers() {
        let now = BootClock.now()
        for timer in armedTimers {
            if let deadline = timer.takeUnretainedValue().deadline, deadline <= now { dueTimers.append(timer.takeUnretainedValue()) }
        }
        if dueTimers.count > 1 { dueTimers.sort { $0.deadline ?? now < $1.deadline ?? now } }
        timersChanged = true
        for index in dueTimers.indices {
            guard !isKnownUniquelyReferenced(&dueTimers[index]), let deadline = dueTimers[index].deadline, deadline <= now else { continue }
            let timer = dueTimers[index]
            timer.disarm()
            timer.fired()
        }
        dueTimers.removeAll(keepingCapacity: true)
    }

    // MARK: Tests

    /// The epoll descriptor and the loop's own two in it (for reading /proc/self/fdinfo).
    public var descriptors: (epoll: Int32, own: Set<Int32>) { (epoll, [wakeUp, timerDescriptor]) }

    /// The descriptors registered with epoll now, besides the loop's own two.
    public var registeredDescriptors: [Int32: IOEvents] {
        registered.filter { $0.key != wakeUp && $0.key != timerDescriptor }.mapValues { mask in
            var events: IOEvents = []
            if mask & UInt32(EPOLLIN.rawValue) != 0 { events.insert(.readable) }
            if mask & UInt32(EPOLLOUT.rawValue) != 0 { events.insert(.writable) }
            return events
        }
    }
}

private final class EpollWatch: IOWatch {
    let descriptor: Int32
    private(set) var events: IOEvents
    let handler: (IOEvents) -> Void
    private weak var loop: EventLoop?
    private(set) var cancelled = false

    init(descriptor: Int32, events: IOEvents, handler: @escaping (IOEvents) -> Void, loop: EventLoop) {
        self.descriptor = descriptor
        self.events = events
        self.handler = handler
        self.loop = loop
    }

    func update(_ events: IOEvents) {
        guard !cancelled, events != self.events else { return }
        self.events = events
        loop?.refresh(descriptor)
    }

    func cancel() {
        guard !cancelled else { return }
        cancelled = true
        loop?.refresh(descriptor)
    }
}

private final class EpollTimer: LoopTimer {
    private weak var loop: EventLoop?
    let fired: () -> Void
    private(set) var deadline: Duration?
    /// On the loop's list of armed timers (the loop keeps this).
    fileprivate var listed = false

    init(loop: EventLoop, fired: @escaping () -> Void) {
        self.loop = loop
        self.fired = fired
    }

    func arm(at deadline: Duration) {
        self.deadline = deadline
        loop?.armed(self)
    }

    func arm(after delay: Duration) { arm(at: BootClock.now() + delay) }

    func disarm() {
        guard deadline != nil else { return }
        deadline = nil
        loop?.disarmed(self)
    }

    deinit {
        loop?.disarmed(self)
    }
}

/// A `sync` call's work, run on the loop for a thread that waits for its result.
private final class SyncJob<T>: @unchecked Sendable {
    // Guard: `work` is set before the job is handed in and cleared on the loop before `done` is filled.
    private var work: (() throws -> T)?
    private let done = Handoff<Result<T, any Error>>()

    init(_ work: @escaping () throws -> T) { self.work = work }

    func run() {
        let outcome = Result { try work!() }
        work = nil
        done.put(outcome)
    }

    func result() -> Result<T, any Error> { done.take() }
}

/// One value passed from the loop's thread to a thread waiting for it.
final class Handoff<Value>: @unchecked Sendable {
    // Guard: `value` is behind `mutex`/`condition`.
    private var mutex = pthread_mutex_t()
    private var condition = pthread_cond_t()
    private var value: Value?

    init() {
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&condition, nil)
    }

    deinit {
        pthread_cond_destroy(&condition)
        pthread_mutex_destroy(&mutex)
    }

    func put(_ value: Value) {
        pthread_mutex_lock(&mutex)
        self.value = value
        pthread_cond_signal(&condition)
        pthread_mutex_unlock(&mutex)
    }

    func take() -> Value {
        pthread_mutex_lock(&mutex)
        while value == nil { pthread_cond_wait(&condition, &mutex) }
        let taken = value!
        pthread_mutex_unlock(&mutex)
        return taken
    }
}
