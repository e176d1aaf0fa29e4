/// The wall clock as the shell read it with an event: seconds since the
/// Unix epoch and the local offset east of UTC then (quiet hours are local times).
public struct WallTime: Sendable, Hashable {
    public var seconds: Double
    public var utcOffset: Int

    public init(seconds: Double, utcOffset: Int) {
        self.seconds = seconds
        self.utcOffset = utcOffset
    }
}
