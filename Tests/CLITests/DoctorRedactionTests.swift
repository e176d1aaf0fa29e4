@testable import ccrelay
import Testing

/// What `ccrelay doctor` leaves of an address (issue 25): enough to tell a
/// campus range, never a machine; times and words stay as they are.
@Suite struct DoctorRedactionTests {
    @Test func addressesAreCutToTheirFirstPartsAndNothingElseIsTouched() {
        #expect(DoctorCommand.cutAddresses("IPv4 10.20.30.40: ok") == "IPv4 10.20.x.x: ok")
        // Issue 31.14: an address that ends a sentence.
        #expect(DoctorCommand.cutAddresses("outside access for 10.20.30.40.") == "outside access for 10.20.x.x.")
        #expect(DoctorCommand.cutAddresses("IPv6 2001:da8:8000:6300:1a2b:3c4d:5e6f:7a8b: ok") == "IPv6 2001:da8:…: ok")
        #expect(DoctorCommand.cutAddresses("via 2001:da8::1 and fe80::1") == "via 2001:da8:… and fe80::…")
        #expect(DoctorCommand.cutAddresses("IPv6 ::1: refused") == "IPv6 ::1: refused", "loopback says nothing of the machine")
        #expect(DoctorCommand.cutAddresses("2026-12-02 11:03:20  online → sleeping") == "2026-12-02 11:03:20  online → sleeping")
        #expect(DoctorCommand.cutAddresses("MAC aa:bb:cc:dd:ee:ff, libcurl 7.88.1, face:") == "MAC aa:bb:cc:dd:ee:ff, libcurl 7.88.1, face:")
    }
}
