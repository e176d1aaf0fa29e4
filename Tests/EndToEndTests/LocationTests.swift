import DBus
import DBusAsync
import Foundation
import TestSupport
import Testing

/// Location end to end: the real daemon, ccsim requiring a fix, a fake
/// GeoClue2 (python3-dbusmock, Tests/Fixtures/geoclue2.py) on a private system
/// bus or a fake Location portal on the session bus, and dunst showing the
/// alerts in Chinese.
@Suite(.desktopBudget) struct LocationTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures").path
    static let geoclueName = "org.freedesktop.GeoClue2"
    static let manager: ObjectPath = "/org/freedesktop/GeoClue2/Manager"

    /// A daemon in zh_CN whose system bus carries a fake GeoClue2 started with `parameters`.
    func rig(geoclue parameters: String = "{}", simulator location: String = "required", mode: String = "auto") async throws
        -> (DaemonRig, MockSystemService)
    {
        let system = try PrivateBus()
        let geoclue = try await MockSystemService(
            template: Self.fixtures + "/geoclue2.py", name: Self.geoclueName, parameters: parameters, on: system)
        let rig = try await DaemonRig(
            extraConfig: "[location]\nmode = \(mode)", simulator: ["--interval", "2", "--timeout", "8", "--location", location],
            systemBus: system, extraEnvironment: ["LANG": "zh_CN.UTF-8", "LANGUAGE": "zh_CN"])
        return (rig, geoclue)
    }

    /// The location each report carried, oldest first (nil: none).
    func reportedLocations(_ rig: DaemonRig) -> [[String: Any]?] {
        ((try? rig.sim.sessions()) ?? []).flatMap { ($0["reports"] as? [[String: Any]]) ?? [] }.map { $0["location"] as? [String: Any] }
    }

    func locationAlerts(_ rig: DaemonRig) -> [TestSupport.Dunst.Record] {
        ((try? rig.dunst.closeAllAndReadHistory()) ?? []).filter { $0.category == "x-ccrelay.location" }
    }

    func status(_ rig: DaemonRig) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(try rig.cli(["status", "--json"]).standardOutput.utf8)) as? [String: Any] ?? [:]
    }

    @Test func fixesFromGeoClueGoWithTheKeepAlives() async throws {
        let (rig, geoclue) = try await rig()
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 2 }, "\(rig.log)")
        let first = try #require(reportedLocations(rig).compactMap { $0 }.first, "\(rig.log)")
        #expect(first["lat"] as? Double == 30.6586 && first["lon"] as? Double == 104.0648 && first["accuracy"] as? Double == 65.0)
        #expect((first["timestamp"] as? String)?.hasSuffix("Z") == true)
        // The client was set up for a keep-alive, not navigation.
        let client: ObjectPath = "/org/freedesktop/GeoClue2/Client/1"
        let properties = try await geoclue.call(Self.geoclueName, client, "org.freedesktop.DBus.Properties", "GetAll",
                                                [.string("org.freedesktop.GeoClue2.Client")])
        let values = try properties.argument(0, as: [String: Variant].self)
        #expect(values["DesktopId"]?.get(String.self) == "io.github.ccrelay.CCRelay")
        #expect(values["RequestedAccuracyLevel"]?.get(UInt32.self) == 8)
        #expect(values["TimeThreshold"]?.get(UInt32.self) == 60 && values["DistanceThreshold"]?.get(UInt32.self) == 100)
        // A new fix is sent from then on.
        try await geoclue.call(Self.geoclueName, Self.manager, "org.freedesktop.DBus.Mock", "PushFix",
                               [.double(31.0), .double(121.5), .double(12.0)])
        #expect(await eventually(timeout: .seconds(20)) { reportedLocations(rig).last??["lat"] as? Double == 31.0 })
        #expect(try status(rig)["location"] as? String == "ok")
        #expect(locationAlerts(rig).isEmpty)
        // Never a fix without need: with the server not asking, none is sent.
        #expect(reportedLocations(rig).allSatisfy { $0 != nil })
    }

    static let refusals: [(String, String, String, String)] = [
        ("'io.github.ccrelay.CCRelay' disallowed, no agent for UID 1000", "定位服务被禁止", "定位代理", "denied"),
        ("'io.github.ccrelay.CCRelay' disallowed by configuration for UID 1000", "定位服务被禁止", "geoclue.conf", "denied"),
        ("'io.github.ccrelay.CCRelay' disallowed by user", "定位服务被禁止", "设置 → 隐私 → 定位服务", "denied"),
        ("Geolocation disabled for UID 1000", "未开启定位服务", "开启定位服务", "disabled"),
    ]

    @Test(arguments: refusals)
    func eachGeoClueRefusalRaisesItsAlertAndRecoveryClosesIt(_ refusal: String, _ title: String, _ body: String, _ state: String)
        async throws
    {
        let parameters = String(decoding: try JSONSerialization.data(withJSONObject: ["refusal": refusal]), as: UTF8.self)
        let (rig, geoclue) = try await rig(geoclue: parameters)
        #expect(await eventually(timeout: .seconds(20)) {
            (try? rig.dunst.control(["count", "displayed"]).standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)) != "0"
        }, "\(rig.log)")
        #expect(await eventually { (try? status(rig)["location"] as? String) == state }, "\(rig.log)")
        try await geoclue.call(Self.geoclueName, Self.manager, "org.freedesktop.DBus.Mock", "SetRefusal", [.string("")])
        // Asked again with the next keep-alive: the fix arrives and the alert is closed.
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        #expect(await eventually { (try? status(rig)["location"] as? String) == "ok" })
        let alerts = locationAlerts(rig)
        let alert = try #require(alerts.first, "\(rig.log)")
        #expect(alert.summary == title)
        #expect(alert.body.contains(body), "\(alert.body)")
        #expect(try rig.dunst.control(["count", "displayed"]).standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "0",
                "the alert was closed when location came back")
        let history = try rig.cli(["history", "--json", "--kind", alertKind(state)]).standardOutput
        #expect(history.contains(#""acknowledged":false"#), "closing does not acknowledge: \(history)")
    }

    func alertKind(_ state: String) -> String { state == "disabled" ? "location-off" : "location-denied" }

    @Test func activeTurningFalseWhileRequiredSaysLocationIsNotSetUpCorrectlyUntilItResumes() async throws {
        let (rig, geoclue) = try await rig()
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        try await geoclue.call(Self.geoclueName, Self.manager, "org.freedesktop.DBus.Mock", "SetActive", [.boolean(false)])
        #expect(await eventually(timeout: .seconds(20)) { locationAlerts(rig).contains { $0.summary == "定位服务未正确设置" } },
                "\(rig.log)")
        // The next keep-alive asks GeoClue again, which starts and gives a fix.
        #expect(await eventually(timeout: .seconds(20)) { (try? status(rig)["location"] as? String) == "ok" }, "\(rig.log)")
    }

    @Test func anApproximateOnlyGrantIsTooCoarse() async throws {
        let (rig, geoclue) = try await rig(geoclue: #"{"available": 4}"#)
        #expect(await eventually(timeout: .seconds(20)) { locationAlerts(rig).contains { $0.summary == "定位服务未正确设置" } }, "\(rig.log)")
        withExtendedLifetime(geoclue) {}
    }

    @Test func a428StartsLocationAndTheRetryCarriesAFix() async throws {
        let (rig, geoclue) = try await rig(simulator: "none")
        defer { withExtendedLifetime(geoclue) {} }
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        #expect(reportedLocations(rig).allSatisfy { $0 == nil }, "no fix while the campus does not ask")
        #expect(try status(rig)["location"] as? String == "off")
        try rig.sim.control("POST", "settings", ["location": "required"])
        #expect(await eventually(timeout: .seconds(20)) {
            let reports = ((try? rig.sim.sessions()) ?? []).flatMap { ($0["reports"] as? [[String: Any]]) ?? [] }
            guard let rejected = reports.firstIndex(where: { $0["accepted"] as? Bool == false }) else { return false }
            return reports[rejected...].contains { $0["accepted"] as? Bool == true && $0["location"] != nil }
        }, "428, then a keep-alive with a fix: \(rig.log)")
        #expect(locationAlerts(rig).isEmpty, "one 428 answered by a fix needs no alert")
    }

    @Test func a428ThatNoFixCanAnswerEndsInAnAlert() async throws {
        let (rig, geoclue) = try await rig(geoclue: #"{"refusal": "Geolocation disabled for UID 1000"}"#, simulator: "none")
        defer { withExtendedLifetime(geoclue) {} }
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        try rig.sim.control("POST", "settings", ["location": "required"])
        #expect(await eventually(timeout: .seconds(20)) { locationAlerts(rig).contains { $0.summary == "未开启定位服务" } }, "\(rig.log)")
    }

    @Test func withModeOffNothingIsAskedAndNothingAlerted() async throws {
        let (rig, geoclue) = try await rig(mode: "off")
        #expect(await eventually(timeout: .seconds(20)) { rig.log.contains("state: failing") }, "\(rig.log)")
        #expect(!rig.log.contains("asking GeoClue"), "GeoClue never asked: \(rig.log)")
        withExtendedLifetime(geoclue) {}
        #expect(locationAlerts(rig).isEmpty)
    }

    /// The real geoclue-2.0 daemon on a private system bus: with no location
    /// agent for this user it never answers GetClient, which ccrelay reports
    /// as "no agent" after its 10 s wait.
    @Test func theRealGeoClueWithoutAnAgentIsReportedAsNoAgent() async throws {
        let system = try PrivateBus()
        let geoclue = try ChildProcess("/usr/libexec/geoclue", [], environment: ["DBUS_SYSTEM_BUS_ADDRESS": system.address],
                                       captureOutput: false)
        defer { geoclue.stop() }
        #expect(try await system.waitForName(Self.geoclueName), "geoclue did not start")
        let rig = try await DaemonRig(
            extraConfig: "[location]\nmode = auto", simulator: ["--interval", "2", "--timeout", "8", "--location", "required"],
            systemBus: system, extraEnvironment: ["LANG": "zh_CN.UTF-8", "LANGUAGE": "zh_CN"])
        #expect(await eventually(timeout: .seconds(40)) {
            locationAlerts(rig).contains { $0.summary == "定位服务被禁止" && $0.body.contains("定位代理") }
        }, "\(rig.log)")
        #expect(rig.log.contains("location: GeoClue refused"), "\(rig.log)")
    }

    // MARK: The Location portal

    func portalRig(_ parameters: String) async throws -> (DaemonRig, MockSystemService) {
        let holder = LockedBox<MockSystemService?>(nil)
        let rig = try await DaemonRig(
            extraConfig: "[location]\nmode = auto\nsource = portal",
            simulator: ["--interval", "2", "--timeout", "8", "--location", "required"],
            extraEnvironment: ["LANG": "zh_CN.UTF-8", "LANGUAGE": "zh_CN"]
        ) { bus in
            holder.set(try await MockSystemService(
                template: Self.fixtures + "/location_portal.py", name: "org.freedesktop.portal.Desktop", parameters: parameters, on: bus))
        }
        return (rig, try #require(holder.get()))
    }

    @Test func thePortalGivesFixesAndItsRefusalsBecomeAlerts() async throws {
        let (granted, portal1) = try await portalRig("{}")
        #expect(await eventually(timeout: .seconds(20)) { granted.acceptedReports() >= 1 }, "\(granted.log)")
        #expect(reportedLocations(granted).compactMap { $0 }.first?["accuracy"] as? Double == 20.0)

        let (refused, portal2) = try await portalRig(#"{"response": 1}"#)
        #expect(await eventually(timeout: .seconds(20)) { locationAlerts(refused).contains { $0.summary == "定位服务被禁止" } }, "\(refused.log)")

        let (off, portal3) = try await portalRig(#"{"error": "org.freedesktop.portal.Error.NotAllowed"}"#)
        #expect(await eventually(timeout: .seconds(20)) { locationAlerts(off).contains { $0.summary == "未开启定位服务" } }, "\(off.log)")
        withExtendedLifetime((portal1, portal2, portal3)) {}
    }
}
