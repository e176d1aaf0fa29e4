import DesktopServices
import SessionLogic

/// Keeps the daemon's `AlertStore` usable through a full, read-only or
/// failing disk: the daemon runs on without persistence, says so once per
/// episode, and opens the file again at most once a minute when it next
/// needs it (no timer of its own: no extra wake-ups). Only a damaged or
/// foreign file is ever moved aside (by `AlertStore` itself).
/// Confinement: used only on the daemon's loop.
final class JournalKeeper {
    private let path: String
    private let log: (String) -> Void
    private let now: () -> Instant
    private(set) var store: AlertStore?
    private var lastAttempt: Instant?
    /// The problem already reported for this episode.
    private var reported: String?
    static let retryAfter: Duration = .seconds(60)

    init(path: String, log: @escaping (String) -> Void, now: @escaping () -> Instant) {
        self.path = path
        self.log = log
        self.now = now
        _ = usable()
    }

    /// The store, opening it again if it could not be used and a minute has passed.
    func usable() -> AlertStore? {
        if let store { return store }
        let time = now()
        if let lastAttempt, time - lastAttempt < Self.retryAfter { return nil }
        lastAttempt = time
        do {
            // Short waits for the CLI's writes: the keep-alive loop must not stall on the file.
            let opened = try AlertStore(path: path, busyTimeout: 500, log: log)
            store = opened
            if reported != nil { log("\(path) can be used again") }
            reported = nil
            return opened
        } catch {
            report("\(error)")
            return nil
        }
    }

    /// A read or write failed: said once per episode; the file is kept.
    func failed(_ error: RelayError, doing what: String) {
        report("cannot \(what) in \(path): \(error)")
    }

    /// A write worked: the episode (if any) is over.
    func succeeded() {
        guard reported != nil, store != nil else { return }
        reported = nil
        log("\(path) can be written again")
    }

    private func report(_ problem: String) {
        guard reported == nil else { return }
        reported = problem
        log(problem + "; ccrelay goes on without its journal (alerts are still shown) and tries again later")
    }
}
