@testable import CCProtocol
@testable import DaemonShell
import DBus
import Testing
import CCRelayCore
import EventLoop

/// A fix as GeoClue or the portal hands it over is checked before it goes
/// into a keep-alive: coordinates off the Earth (or not numbers) are no fix,
/// an accuracy that is not a finite, non-negative number is unknown (0).
@Suite struct LocationFixTests {
    func fix(_ latitude: Double, _ longitude: Double, accuracy: Double? = nil) -> LocationFix? {
        var properties = ["Latitude": Variant(latitude), "Longitude": Variant(longitude)]
        if let accuracy { properties["Accuracy"] = Variant(accuracy) }
        return LocationFix(properties: properties, now: WallClock.now())
    }

    @Test func aFixOnTheEarthIsTakenAsItIs() throws {
        let shanghai = try #require(fix(31.2304, 121.4737, accuracy: 12.5))
        #expect(shanghai.lat == 31.2304 && shanghai.lon == 121.4737 && shanghai.accuracy == 12.5)
        #expect(fix(-90, 180) != nil && fix(90, -180) != nil, "the poles and the date line are on the Earth")
        #expect(Wire.body(KeepAliveRequest(seq: 3, location: shanghai)).contains(#""seq":3"#))
    }

    @Test(arguments: [(Double.nan, 0.0), (0, .nan), (.infinity, 0), (0, -.infinity), (90.5, 0), (0, 180.01), (-1e300, 0)])
    func coordinatesOffTheEarthAreNoFix(latitude: Double, longitude: Double) {
        #expect(fix(latitude, longitude) == nil)
    }

    @Test func anAccuracyThatIsNotADistanceIsUnknown() {
        for accuracy in [Double.nan, .infinity, -5] { #expect(fix(1, 2, accuracy: accuracy)?.accuracy == 0, "\(accuracy)") }
        #expect(fix(1, 2)?.accuracy == 0)
    }
}
