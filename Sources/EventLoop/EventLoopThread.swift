#if canImport(Glibc)
import Glibc
#endif

/// An `EventLoop` running on a thread of its own, for callers that are not
/// an event loop themselves (tests, benchmarks, command-line tools): they
/// reach it with `execute`, `sync` and the async adapters. The daemon never
/// needs one: its main thread is its loop.
public final class EventLoopThread: @unchecked Sendable {
    // Guard: immutable after init.
    public let loop: EventLoop
    private let thread: pthread_t

    /// Starts the thread and its loop.
    public init() {
        let made = Handoff<EventLoop>()
        let start = Unmanaged.passRetained(ThreadStart {
            let loop = try! EventLoop()
            made.put(loop)
            return loop
        }).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { context in
            let start = Unmanaged<ThreadStart>.fromOpaque(context!).takeRetainedValue()
            start.body()
            return nil
        }, start)
        precondition(result == 0, "cannot start an event loop thread: \(SystemError("pthread_create", errno: result))")
        self.thread = thread
        loop = made.take()
    }

    /// Stops the loop and waits for its thread to end.
    public func stop() {
        loop.stop()
        pthread_join(thread, nil)
    }
}

/// What a loop thread runs: makes its loop (handing it back) and runs it.
private final class ThreadStart {
    let made: () -> EventLoop
    init(_ made: @escaping () -> EventLoop) { self.made = made }
    func body() { made().run() }
}
