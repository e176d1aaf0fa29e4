import CoreVocabulary

/// The daemon's single rules that are not the session's own, pure: each
/// takes the facts and returns the decision; `DaemonCore` asks them.
public enum DaemonRules {
    /// The refusals a changed certificate, key or CA file may cure.
    public static let credentialProblemCodes: Set<ProblemCode> = [.certificateRefused, .certificateUnusable, .certificateExpired]

    /// The problems a login or keep-alive that goes through leaves said: they
    /// are the configuration file's, not the session's (an edited file that
    /// cannot be used while the old one keeps the session). Any other problem
    /// ends when the server lets the session on (issue 33.7: "last error … HTTP
    /// 503" shown an hour later while online).
    public static let problemsASessionOutlives: Set<ProblemCode> = [.configurationUnusable, .unconfigured]

    /// After the server or the file check refused the certificate, the
    /// user replaced a credential file: log in again at once (only then: a
    /// file changing while online, or after another problem, changes nothing).
    public static func logInAgainAfterCredentialFilesChanged(state: DaemonState, lastProblemCode: ProblemCode?) -> Bool {
        state == .loggedOut && lastProblemCode.map(credentialProblemCodes.contains) == true
    }

    /// A sleep logind did not announce: since the last timer, CLOCK_BOOTTIME
    /// ran ahead of CLOCK_MONOTONIC (time asleep) by more than five seconds.
    public static func sleptUnannounced(sleptBefore: Duration, sleptNow: Duration, state: DaemonState) -> Bool {
        sleptNow - sleptBefore > .seconds(5) && state != .sleeping
    }

    /// The daily look at the certificate: a warning in its last week (an
    /// expired one is the server's refusal to report, not a warning).
    public static func expiryWarning(secondsUntilExpiry: Int64) -> AlertSubject? {
        guard secondsUntilExpiry >= 0, secondsUntilExpiry / 86_400 < 7 else { return nil }
        return .credentials(.certificateExpiring(days: Int(secondsUntilExpiry / 86_400)))
    }

    /// The bubbles for the alerts one answer raised, in order: each alert
    /// but the notices, of which only the newest (all are journaled; one
    /// bubble replaced a thousand times helps nobody), with how many more notices came with it.
    public static func bubbles(for subjects: [AlertSubject]) -> [(subject: AlertSubject, moreNotices: Int)] {
        let notices = subjects.count { if case .notice = $0 { true } else { false } }
        let newest = subjects.lastIndex { if case .notice = $0 { true } else { false } }
        return subjects.enumerated().compactMap { index, subject in
            guard case .notice = subject else { return (subject, 0) }
            return index == newest ? (subject, notices - 1) : nil
        }
    }

    /// Stopping: of what the session wants then, only its logout goes out
    /// (no alert, timer or state change from a daemon on its way out).
    public static func whenStopping(_ effects: [SessionEffect]) -> [SessionEffect] {
        effects.filter { $0 == .sendLogout }
    }
}
