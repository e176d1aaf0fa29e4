import Dispatch
import EventLoop

/// An `EventScheduler` on a serial dispatch queue, for the command line and
/// tests, where a thread pool costs nothing that matters. The daemon never
/// links this: it runs on an `EventLoop`.
///
/// Confinement (why `@unchecked Sendable` is sound): the watches and timers
/// it makes are used only on `queue`.
public final class DispatchScheduler: EventScheduler, @unchecked Sendable {
    public let queue: DispatchQueue
    private let key = DispatchSpecificKey<ObjectIdentifier>()

    public init(label: String) {
        queue = DispatchQueue(label: label)
        queue.setSpecific(key: key, value: ObjectIdentifier(self))
    }

    public var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == ObjectIdentifier(self) }

    public var now: Duration { BootClock.now() }

    public func execute(_ work: @escaping @Sendable () -> Void) { queue.async(execute: work) }

    public func sync<T>(_ work: () throws -> T) rethrows -> T {
        if isCurrent { return try work() }
        return try queue.sync(execute: work)
    }

    /// Runs `work` on the queue after `delay`.
    public func execute(after delay: Duration, _ work: @escaping @Sendable () -> Void) {
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(clamping: delay.components.seconds * 1_000_000_000
            + delay.components.attoseconds / 1_000_000_000)), execute: work)
    }

    public func watch(_ descriptor: Int32, for events: IOEvents, _ handler: @escaping (IOEvents) -> Void) -> any IOWatch {
        preconditionIsCurrent("a dispatch scheduler's watch")
        let watch = SourceWatch(descriptor: descriptor, queue: queue, handler: handler)
        watch.update(events)
        return watch
    }

    public func makeTimer(_ fired: @escaping () -> Void) -> any LoopTimer {
        SourceTimer(queue: queue, fired: fired)
    }
}

/// A watch as up to two dispatch sources (read, write).
private final class SourceWatch: IOWatch, @unchecked Sendable {
    // Confinement: used only on `queue`.
    let descriptor: Int32
    let queue: DispatchQueue
    let handler: (IOEvents) -> Void
    private(set) var events: IOEvents = []
    private var read: DispatchSourceRead?
    private var write: DispatchSourceWrite?
    private var cancelled = false

    init(descriptor: Int32, queue: DispatchQueue, handler: @escaping (IOEvents) -> Void) {
        self.descriptor = descriptor
        self.queue = queue
        self.handler = handler
    }

    func update(_ events: IOEvents) {
        guard !cancelled else { return }
        self.events = events
        if events.contains(.readable), read == nil {
            let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
            source.setEventHandler { [weak self] in self?.handler(.readable) }
            source.resume()
            read = source
        } else if !events.contains(.readable), let source = read {
            source.cancel()
            read = nil
        }
        if events.contains(.writable), write == nil {
            let source = DispatchSource.makeWriteSource(fileDescriptor: descriptor, queue: queue)
            source.setEventHandler { [weak self] in self?.handler(.writable) }
            source.resume()
            write = source
        } else if !events.contains(.writable), let source = write {
            source.cancel()
            write = nil
        }
    }

    func cancel() {
        update([])
        cancelled = true
    }

    deinit {
        read?.cancel()
        write?.cancel()
    }
}

/// A one-shot timer as a dispatch timer source on the wall clock's monotonic twin.
private final class SourceTimer: LoopTimer, @unchecked Sendable {
    // Confinement: used only on `queue`.
    let queue: DispatchQueue
    let fired: () -> Void
    private var source: DispatchSourceTimer?

    init(queue: DispatchQueue, fired: @escaping () -> Void) {
        self.queue = queue
        self.fired = fired
    }

    func arm(at deadline: Duration) {
        disarm()
        let delay = max(deadline - BootClock.now(), .zero)
        let nanoseconds = Int(clamping: delay.components.seconds * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000)
        let source = DispatchSource.makeTimerSource(queue: queue)
        source.schedule(deadline: .now() + .nanoseconds(nanoseconds), leeway: .milliseconds(1))
        source.setEventHandler { [weak self] in
            guard let self else { return }
            self.disarm()
            self.fired()
        }
        source.resume()
        self.source = source
    }

    func arm(after delay: Duration) { arm(at: BootClock.now() + delay) }

    func disarm() {
        source?.cancel()
        source = nil
    }

    deinit { source?.cancel() }
}
