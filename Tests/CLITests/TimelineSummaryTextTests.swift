import CoreVocabulary
import Foundation
@testable import ccrelay
import CCRelayCore
import Testing

/// The timeline's summary line says what its share is of: the window, or
/// the shorter time on record (issue 33.7: "online 70.0 % of the last 7d"
/// after 43 s of records).
@Suite struct TimelineSummaryTextTests {
    static func entry(_ at: Double, _ from: DaemonState, _ to: DaemonState, _ cause: String) -> TimelineEntry {
        TimelineEntry(at: at, subject: .state, from: from.rawValue, to: to.rawValue, cause: cause)
    }

    @Test func youngRecordsSayHowMuchTimeTheyCover() {
        let week = 7 * 86_400.0
        let young = TimelineSummary([Self.entry(week - 43, .offline, .loggingIn, "the daemon started"),
                                     Self.entry(week - 13, .loggingIn, .online, "login: granted")],
                                    since: 0, now: week)
        #expect(TimelineCommand.describe(young, window: "7d", seconds: week) == "online 30.2 % of the 43 s on record in the last 7d")
    }

    @Test func recordsThatCoverTheWindowSpeakOfTheWindow() {
        let day = 86_400.0
        let whole = TimelineSummary([Self.entry(0, .loggingIn, .online, "login: granted"),
                                     Self.entry(day / 2, .online, .loggedOut, "the server ended the session (kicked)")],
                                    since: 10, now: day)
        #expect(TimelineCommand.describe(whole, window: "1d", seconds: day - 10)
            == "online 49.9 % of the last 1d; 1 drop: 1 the server ended the session (kicked)")
    }

    @Test func spansReadInTheirUnit() {
        #expect([43, 119, 120, 7199, 7200, 172_799, 172_800, 604_800].map(TimelineCommand.span)
            == ["43 s", "119 s", "2 min", "119 min", "2 h", "47 h", "2 d", "7 d"])
    }

    /// `timeline --help` names every key of the `--json` summary (it left recorded_seconds out).
    @Test func theHelpNamesEveryKeyOfTheJSONSummary() throws {
        let json = TimelineCommand.TimelineJSON(entries: [], summary: TimelineSummary([], since: 0, now: 60))
        let object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(json)) as? [String: Any]
        let keys = try #require((object?["summary"] as? [String: Any])?.keys)
        #expect(keys.count == 3)
        for key in keys { #expect(TimelineCommand.usage.contains(key), "\(key)") }
    }
}
