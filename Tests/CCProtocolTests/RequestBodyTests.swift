@testable import CCProtocol
import Foundation
import Testing
import CCRelayCore

/// The CC/1 request bodies as JSONEncoder writes them: what a server reads
/// back is what was meant, whatever the text holds; absent fields are left out.
@Suite struct RequestBodyTests {
    func decoded(_ body: String) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
    }

    @Test func aLoginCarriesAnyTextExactly() throws {
        let login = LoginRequest(client: ClientInfo(version: "0.1.0"), device: "dorm \"pc\"\n", user: "2023", password: "p\\ä\u{1}")
        let body = try decoded(Wire.body(login))
        #expect(body["device"] as? String == "dorm \"pc\"\n")
        #expect(body["password"] as? String == "p\\ä\u{1}")
        #expect((body["client"] as? [String: String]) == ["name": "ccrelay", "version": "0.1.0", "platform": "linux"])
        #expect(!Wire.body(LoginRequest(client: ClientInfo(version: "1"), device: "d")).contains("user"), "absent fields are left out")
    }

    @Test func aKeepAliveCarriesItsSeqAndFix() throws {
        let fix = LocationFix(lat: 31.2304, lon: 121.4737, accuracy: 12.5, timestamp: "2026-12-01T02:13:00Z")
        let body = try decoded(Wire.body(KeepAliveRequest(seq: UInt64(1) << 53, location: fix)))
        #expect((body["seq"] as? NSNumber)?.uint64Value == UInt64(1) << 53)
        let location = try #require(body["location"] as? [String: Any])
        #expect(location["lat"] as? Double == 31.2304 && location["lon"] as? Double == 121.4737 && location["accuracy"] as? Double == 12.5)
        #expect(location["timestamp"] as? String == "2026-12-01T02:13:00Z")
        #expect(Wire.body(KeepAliveRequest(seq: 7)) == #"{"seq":7}"#)
    }
}
