import DesktopServices
import EventLoop
import CCRelayCore
import CoreVocabulary

extension DaemonStatus {
    /// What `GetStatus` answers for a published snapshot, read at `now`.
    init(_ snapshot: DaemonSnapshot, version: String, at now: Instant, wallClock: Double) {
        self.init(
            state: snapshot.state.rawValue, badge: UInt32(clamping: snapshot.badge.count), urgent: snapshot.badge.urgent,
            remaining: snapshot.remaining(at: now), ip: snapshot.ip, server: snapshot.server,
            lastError: snapshot.problem?.sentence ?? "", lastErrorCode: snapshot.problem?.code.rawValue ?? "",
            nextAttempt: snapshot.secondsToNextAttempt(at: now), interval: UInt32(clamping: snapshot.interval.components.seconds),
            timeout: UInt32(clamping: snapshot.timeout.components.seconds), location: snapshot.location, version: version,
            relays: snapshot.forwarding)
        account = snapshot.account
        serverProtocol = snapshot.serverProtocol.rawValue
        outside = snapshot.outside.rawValue
        outside6 = snapshot.outside6.rawValue
        // When it was checked, on the wall clock: that long before now.
        outsideChecked = snapshot.outsideCheckedAt.map { checked in
            let age = now - checked
            return wallClock - (Double(age.components.seconds) + Double(age.components.attoseconds) / 1e18)
        }
    }
}

/// What a new snapshot changes for those who listen: the control
/// properties whose values differ (announced with `PropertiesChanged`),
/// whether the dock's badge (count or urgency) does, and whether the tray
/// shows anything else now (the time left alone, which every keep-alive
/// moves, is read when the tray is looked at). The first snapshot changes everything.
struct SnapshotChange: Equatable {
    var properties: [ControlProperty]
    var badge: Bool
    var tray: Bool

    init(from old: DaemonSnapshot?, to new: DaemonSnapshot) {
        properties = []
        if old?.state != new.state { properties.append(.state) }
        if old?.badge.count != new.badge.count { properties.append(.badge) }
        badge = old?.badge != new.badge
        tray = badge || !properties.isEmpty || old?.ip != new.ip || old?.problem != new.problem || old?.recent != new.recent
            || old?.outside != new.outside || old?.outside6 != new.outside6
    }
}
