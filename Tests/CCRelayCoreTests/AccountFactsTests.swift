@testable import CCRelayCore
import CoreVocabulary
import Testing

/// The account as a Srun portal reports it (issue 32): addresses cut, and a
/// device new to the account while this one is online said once.
struct AccountFactsTests {
    @Test func addressesAreCutToTheirFirstParts() {
        #expect(AccountFacts.cut("10.20.30.40") == "10.20.x.x")
        #expect(AccountFacts.cut("2001:da8:1:2::8f8") == "2001:da8:…")
        #expect(AccountFacts.cut("not an address") == "?")
    }

    @Test func aNewDeviceOnTheAccountIsSaidOnceAndTheBaselineIsTheSessionsFirstList() {
        var configuration = CoreRig.configuration
        configuration.serverProtocol = .srun
        configuration.user = "2024000001"
        configuration.certificate = nil
        configuration.key = nil
        var rig = CoreRig(.usable(configuration))
        rig.start()
        let own = AccountFacts.Device(kind: "Linux", address: "10.20.x.x")
        let phone = AccountFacts.Device(kind: "Android", address: "10.21.x.x")
        rig.send(.loginAnswered(LoginResult(
            grant: .init(token: "srun-session", ip: "10.20.30.40", location: .none), problem: nil, droppedNotices: 0,
            answer: .loggedIn(interval: 60, timeout: 86_400, notices: []), account: AccountFacts(devices: 1, deviceList: [own]))))
        func check(_ devices: [AccountFacts.Device]) {
            rig.send(.keepAliveAnswered(KeepAliveResult(
                problem: nil, droppedNotices: 0, locationRejected: nil, answer: .accepted(interval: nil, timeout: nil, notices: []),
                account: AccountFacts(devices: devices.count, deviceList: devices, usedBytes: 1 << 30))))
        }
        check([own])
        #expect(!rig.effects.contains { if case .show(let alert) = $0 { alert.kind == .newDevice } else { false } })
        check([own, phone])
        check([own, phone])
        check([own])
        check([own, phone])
        let shown = rig.effects.compactMap { if case .show(let alert) = $0, alert.kind == .newDevice { alert } else { nil } }
        #expect(shown.count == 1 && shown[0].body.contains("Android") && shown[0].body.contains("10.21.x.x"), "\(shown)")
        #expect(rig.publications.last?.account?.devices == 2 && rig.publications.last?.account?.usedBytes == 1 << 30, "the status shows the newest")
    }
}
