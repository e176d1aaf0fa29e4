import CCProtocol
import DBus
import EventLoop
import CCRelayCore

/// A source of location fixes: GeoClue2 on the system bus, or the Location
/// portal on the session bus inside a sandbox. Started only while fixes are
/// needed; every method runs on the daemon's loop.
protocol LocationSource: AnyObject {
    func start()
    func stop()
}

/// How often a keep-alive client needs a fix: not navigation. A new fix when
/// the computer moved 100 m, at most one a minute.
enum LocationThresholds {
    static let distanceMeters: UInt32 = 100
    static let timeSeconds: UInt32 = 60
}

extension LocationFix {
    /// A fix from a GeoClue / portal property set; nil without coordinates
    /// on the Earth (a NaN or out-of-range one would make the request's JSON
    /// unwritable); an accuracy that is not a finite, non-negative number is 0 (unknown).
    /// Without a timestamp it was taken `now` (the loop's wall clock).
    init?(properties: [String: Variant], now: Double) {
        guard let latitude = properties["Latitude"]?.get(Double.self), let longitude = properties["Longitude"]?.get(Double.self),
              (-90.0...90.0).contains(latitude), (-180.0...180.0).contains(longitude)
        else { return nil }
        let accuracy = properties["Accuracy"]?.get(Double.self).flatMap { $0.isFinite && $0 >= 0 ? $0 : nil } ?? 0
        var seconds = now
        if case .structure(let fields)? = properties["Timestamp"]?.value, fields.count == 2,
           case .uint64(let whole) = fields[0], case .uint64(let micro) = fields[1], whole > 0
        {
            seconds = Double(whole) + Double(micro) / 1e6
        }
        self.init(lat: latitude, lon: longitude, accuracy: accuracy, timestamp: WallClock.iso8601(seconds))
    }
}
