@testable import ccrelay
import DesktopServices
import Testing

/// `status --watch` prints each change once, whatever the daemon's signals.
@Suite struct StatusChangeFilterTests {
    func status(_ state: String, badge: UInt32 = 0, remaining: Int64? = 100) -> DaemonStatus {
        DaemonStatus(state: state, badge: badge, urgent: false, remaining: remaining, ip: "10.0.0.1", server: "s",
                     lastError: "", interval: 60, timeout: 180, location: "off", version: "1")
    }

    @Test func aRepeatedStatusIsNotPrintedAgainAndTheTimeLeftDoesNotCount() {
        var filter = StatusChangeFilter()
        let seen = [status("logging-in"), status("online"), status("online", remaining: 99), status("online", badge: 1),
                    status("online", badge: 1), status("failing", badge: 1)].map { filter.isNew($0) }
        #expect(seen == [true, true, false, true, false, true])
    }
}
