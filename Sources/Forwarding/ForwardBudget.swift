/// A target's message budget (`limit=5/day`, `limit=20/hour`): at most
/// `count` messages in any `window` (rolling), a digest counting as one.
public struct ForwardBudget: Sendable, Hashable {
    public var count: Int
    /// Seconds.
    public var window: Double

    public init(count: Int, window: Double) {
        self.count = count
        self.window = window
    }

    /// `N/day` or `N/hour`, N from 1 to 1,000; nil when it is not that.
    public init?(_ text: String) {
        let parts = text.split(separator: "/")
        guard parts.count == 2, parts[0].count <= 4, let count = Int(parts[0]), (1...1000).contains(count),
            let window: Double = ["day": 86_400, "hour": 3600][String(parts[1])]
        else { return nil }
        self.init(count: count, window: window)
    }
}
