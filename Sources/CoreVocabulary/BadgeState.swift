/// The unread badge: how many alerts the user has not acknowledged, and
/// whether one of them is critical.
public struct BadgeState: Sendable, Hashable {
    public var count: Int
    public var urgent: Bool
    public init(count: Int, urgent: Bool) {
        self.count = count
        self.urgent = urgent
    }
}
