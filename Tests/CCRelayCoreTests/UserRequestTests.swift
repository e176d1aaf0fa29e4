@testable import CCRelayCore
import CoreVocabulary
import Testing

/// One user vocabulary (issue 34.4): Clear Badge from D-Bus or the tray is a
/// `UserRequest` the core handles as the bubble's action is; the tray menu's
/// entries say their request in the same words.
@Suite struct UserRequestTests {
    @Test func clearBadgeFromTheBusOrTheTrayGoesThroughTheCoreAndClosesEveryBubbleItRead() {
        var rig = CoreRig()
        rig.start()
        rig.send(.certificateInspected(secondsUntilExpiry: 3 * 86_400))
        #expect(rig.badge.count == 1)
        rig.send(.user(.clearBadge))
        #expect(rig.effects.contains(.acknowledge(.all)))
        #expect(rig.badge.count == 0 && rig.publications.last?.badge.count == 0)
        #expect(rig.effects.contains(.close(.credentials)) && !rig.effects.contains(.close(.status)))
    }

    @Test func theTrayMenuSaysItsEntriesAsUserRequests() {
        let facts = TrayFacts(state: .online, ip: "10.1.2.3", remaining: nil, problem: "", unread: 1, urgent: false,
                              recent: [TrayFacts.RecentAlert(id: 4, title: "t", unread: true)])
        let actions = Set(TrayModel.menu(facts, localize: .english).compactMap(\.action))
        #expect(actions.isSuperset(of: [.logout, .clearBadge, .acknowledge(alertID: 4), .showTimeline, .setUp, .quit]), "\(actions)")
    }
}
