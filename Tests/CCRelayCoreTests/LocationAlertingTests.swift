import CCRelayCore
import Testing

/// When location is used and when its problems become alerts (pure).
@Suite struct LocationAlertingTests {
    @Test(arguments: [
        (Configuration.LocationMode.off, ServerLocationPolicy.required, false, false),
        (.auto, .none, false, false),
        (.auto, .optional, true, false),
        (.auto, .required, true, true),
        (.always, .none, true, true),
        (.always, .required, true, true),
    ])
    func theNeedFollowsModeAndServer(_ mode: Configuration.LocationMode, _ server: ServerLocationPolicy, _ sends: Bool,
                                     _ alerts: Bool) {
        let need = LocationNeed(mode: mode, server: server)
        #expect(need.sendsFixes == sends)
        #expect(need.alertsOnProblems == alerts)
    }

    @Test func oneAlertPostedReplacedAndClosedAsTheProblemChanges() {
        var alerting = LocationAlerting()
        let required = LocationNeed(mode: .auto, server: .required)
        #expect(alerting.update(problem: nil, need: required).isEmpty)
        #expect(alerting.update(problem: .denied(.noAgent), need: required) == [.post(.locationDenied(.noAgent))])
        #expect(alerting.update(problem: .denied(.noAgent), need: required).isEmpty, "not posted again")
        #expect(alerting.update(problem: .denied(.byConfiguration), need: required) == [.post(.locationDenied(.byConfiguration))],
                "same slot, new text")
        #expect(alerting.update(problem: .off(.disabled), need: required) == [.close(.locationDenied), .post(.locationOff(.disabled))])
        #expect(alerting.update(problem: nil, need: required) == [.close(.locationOff)])
        #expect(alerting.shown == nil)
    }

    @Test func problemsThatDoNotMatterRaiseNothingAndCloseWhatWasShown() {
        var alerting = LocationAlerting()
        let optional = LocationNeed(mode: .auto, server: .optional)
        #expect(alerting.update(problem: .off(.unavailable), need: optional).isEmpty)
        let required = LocationNeed(mode: .auto, server: .required)
        #expect(alerting.update(problem: .off(.unavailable), need: required) == [.post(.locationOff(.unavailable))])
        #expect(alerting.update(problem: .off(.unavailable), need: optional) == [.close(.locationOff)])
    }

    @Test func everyReasonHasItsOwnText() {
        let subjects: [AlertSubject] = LocationDenial.allCases.map { .locationDenied($0) } + LocationOff.allCases.map { .locationOff($0) }
            + LocationTooCoarse.allCases.map { .locationTooCoarse($0) }
        let bodies = subjects.map { AlertCatalogue.alert(for: $0, localize: .english).body }
        #expect(Set(bodies).count == subjects.count)
        #expect(bodies[1].contains("/etc/geoclue/geoclue.conf") && bodies[1].contains("[io.github.ccrelay.CCRelay]"))
    }
}
