import EventLoop

/// The event loop the tests' CC/1 clients run on: one `EventLoop` on a
/// thread of its own for the whole test process, as the daemon runs its
/// client on its main thread's loop.
public enum TestLoop {
    private static let thread = EventLoopThread()
    public static var shared: EventLoop { thread.loop }
}
