/// How long a target that failed is left alone: 5 s after the first failure,
/// doubling to at most 5 minutes. A campus session coming back (or the
/// network) retries at once instead.
public enum ForwardBackoff {
    private static let cap: Duration = .seconds(300)

    public static func delay(afterFailures failures: Int) -> Duration {
        let doublings = min(max(failures, 1), 16) - 1
        return min(.seconds(5 << doublings), cap)
    }
}
