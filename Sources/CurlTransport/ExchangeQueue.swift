/// Exchanges that run one at a time, in the order they were asked for: each
/// starts when the one before it said it was over (a client's requests on
/// its one kept connection).
///
/// Confinement: used only on its client's loop.
public final class ExchangeQueue {
    private var waiting: [(@escaping () -> Void) -> Void] = []
    private var busy = false

    public init() {}

    /// Queues `exchange`; it calls the function it is given once it is over
    /// (at once, for a step that waits for nothing), and the next one starts.
    public func add(_ exchange: @escaping (_ over: @escaping () -> Void) -> Void) {
        waiting.append(exchange)
        advance()
    }

    /// Queues a step that waits for nothing (dropping a connection): it runs in its turn.
    public func add(step: @escaping () -> Void) {
        add { over in
            step()
            over()
        }
    }

    /// Starts what waits, in order, while nothing is in flight.
    private func advance() {
        while !busy, !waiting.isEmpty {
            busy = true
            waiting.removeFirst()() { [weak self] in
                self?.busy = false
                self?.advance()
            }
        }
    }
}
