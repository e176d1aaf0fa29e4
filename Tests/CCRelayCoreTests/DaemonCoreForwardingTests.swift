@testable import CCRelayCore
import CoreVocabulary
import Forwarding
import Testing

/// The forwarding lanes composed in `DaemonCore` (issue 34.1): their refusal is
/// the `relay-refused` alert, journaled and shown; the session back flushes them.
@Suite struct DaemonCoreForwardingTests {
    static func rig() throws -> CoreRig {
        var configuration = CoreRig.configuration
        configuration.forwardTargets = [try ForwardTarget(key: "gotify", url: "https://gotify.campus.example/message?token=AbC")]
        var rig = CoreRig(.usable(configuration))
        rig.start()
        return rig
    }

    static let item = OutboxItem(
        alertID: 1, target: "", key: "k", attempts: 0, queuedAt: 1_000_000, kind: .loggedOut, title: "Logged out", body: "kicked",
        urgency: .critical, postedAt: 1_000_000)

    @Test func aRefusalIsTheRelayRefusedAlertClosedWhenTheTargetTakesThemAgain() throws {
        var rig = try Self.rig()
        let target = try #require(rig.core.forwarder?.targets.first).name
        var item = Self.item
        item.target = target
        rig.send(.forward(.queued))
        #expect(rig.effects.contains(.forward(.readOutbox(target: target))))
        rig.send(.forward(.outboxRead(target: target, waiting: [item], sent: [], now: 1_000_000, utcOffset: 0)))
        #expect(rig.effects.contains { if case .forward(.post(target, [item], _)) = $0 { true } else { false } })
        rig.send(.forward(.answered(target: target, items: [item], answer: ForwardAnswer(status: 401, text: "", verdict: .refused("HTTP 401")))))
        #expect(rig.recorded.filter { $0.kind == .forwardRefused }.count == 1 && rig.shown.contains { $0.kind == .forwardRefused })
        #expect(rig.recorded.first { $0.kind == .forwardRefused }?.body.contains("HTTP 401") == true)
        // The session back: the lane backing off tries at once.
        rig.effects = []
        rig.loggedIn()
        #expect(rig.effects.contains(.forward(.disarmLaneTimer(target: target))) && rig.effects.contains(.forward(.readOutbox(target: target))))
        rig.send(.forward(.outboxRead(target: target, waiting: [item], sent: [], now: 1_000_010, utcOffset: 0)))
        rig.send(.forward(.answered(target: target, items: [item], answer: ForwardAnswer(status: 200, text: "", verdict: .delivered))))
        #expect(rig.effects.contains(.close(.forwardRefused)))
    }
}
