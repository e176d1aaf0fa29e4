/// A location fix as sent with a keep-alive (docs/protocol.md): what the
/// location rules carry from the source to the request.
public struct LocationFix: Codable, Sendable, Hashable {
    public var lat: Double
    public var lon: Double
    public var accuracy: Double
    /// ISO 8601 UTC, such as `2026-11-29T14:05:00Z`.
    public var timestamp: String
    public init(lat: Double, lon: Double, accuracy: Double, timestamp: String) {
        self.lat = lat
        self.lon = lon
        self.accuracy = accuracy
        self.timestamp = timestamp
    }
}
