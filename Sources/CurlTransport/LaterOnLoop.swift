import EventLoop

/// Runs work on a loop after the caller returned: an answer that is ready at
/// once (a request that could not start) still comes the way every answer
/// does, never from inside the call that asked. One piece of work at a time.
///
/// Confinement: used only on `loop`.
public final class LaterOnLoop {
    private let loop: any EventScheduler
    private var timer: (any LoopTimer)?
    private var work: (() -> Void)?

    public init(loop: any EventScheduler) { self.loop = loop }

    public func run(_ work: @escaping () -> Void) {
        self.work = work
        let timer = self.timer ?? loop.makeTimer { [weak self] in
            let work = self?.work
            self?.work = nil
            work?()
        }
        self.timer = timer
        timer.arm(after: .zero)
    }
}
