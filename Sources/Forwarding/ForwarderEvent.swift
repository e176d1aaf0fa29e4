/// What the forwarding lanes hear (`Forwarder.handle`): the shell reads the
/// outbox and posts the requests, and says what came of them in these terms.
public enum ForwarderEvent: Sendable, Hashable {
    /// New alerts were queued, or the daemon started with some waiting: every idle lane not backing off looks.
    case queued
    /// The campus session or the network is back: lanes backing off try at once.
    case flush
    /// The wall clock was set: what waits for a wall-clock time is decided again.
    case wallClockSet
    /// What waits for `target` (oldest first) and the messages it took lately (`Forwarder.sentWindow`),
    /// read at `now` (wall clock, seconds since the epoch) with the local `utcOffset`.
    case outboxRead(target: String, waiting: [OutboxItem], sent: [SentMessage], now: Double, utcOffset: Int)
    /// `target` answered the message carrying `items`.
    case answered(target: String, items: [OutboxItem], answer: ForwardAnswer)
    /// `target`'s lane timer fired (a hold's end or a back-off's).
    case laneTimerFired(target: String)
}

/// What the forwarding lanes ask of the shell, in order.
public enum ForwarderEffect: Sendable, Hashable {
    /// Read what waits for `target`; answer with `.outboxRead`.
    case readOutbox(target: String)
    /// Begin an attempt for each of `items`, post `message` to `target`; answer with `.answered`.
    case post(target: String, items: [OutboxItem], message: ForwardedAlert)
    /// Arm `target`'s one lane timer (replacing what it was armed for).
    case armLaneTimer(target: String, after: Duration)
    case disarmLaneTimer(target: String)
    /// The target took them, at one instant (they went in one message).
    case markDelivered([OutboxItem], answer: String)
    /// Not taken now: they wait, with why.
    case markFailed([OutboxItem], problem: String)
    /// Refused for good: never sent there again.
    case markRefused([OutboxItem], problem: String)
    case log(String)
    /// The `relay-refused` alert: `target` (as users see it) refuses, in its words.
    case raiseRefusal(target: String, answer: String)
    /// Every target takes the alerts again: the `relay-refused` alert is over.
    case closeRefusal
    /// A queue changed (an alert delivered, refused or failed): the status shows the new summaries.
    case queuesChanged
}
