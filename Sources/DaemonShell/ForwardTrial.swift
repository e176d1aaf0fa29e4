import AlertJournal
import DesktopServices
import EventLoop
import CCRelayCore
import CoreVocabulary
import Forwarding
import ForwardingTransport

/// `ccrelay relay test [TARGET]`: a test message to each configured
/// forwarding target (or the ones `TARGET` names: a service such as `ntfy`,
/// or the start of a target's URL), through the daemon's own request code,
/// each target's answer reported as it comes, in the daemon's own verdict.
/// Nothing is journaled or queued.
public enum ForwardTrial {
    /// The targets `name` selects (all when nil).
    public static func targets(_ configuration: Configuration, matching name: String?) -> [ForwardTarget] {
        guard let name else { return configuration.forwardTargets }
        return configuration.forwardTargets.filter { $0.isNamed(name) }
    }

    /// Sends the test message to `targets` on `loop`; `report` hears each
    /// target's answer as `line` says it, then `done`.
    public static func run(_ targets: [ForwardTarget], caFile: String?, version: String, loop: any EventScheduler,
                           report: @escaping (ForwardTarget, ForwardAnswer) -> Void, done: @escaping () -> Void) {
        let host = DaemonProcess.deviceName
        let now = loop.wallClock
        var left = targets.count
        var posters: [ForwardPoster] = []
        for target in targets {
            let alert = ForwardedAlert(
                kind: .notice, title: Localization.localize("CC Relay test message"),
                body: TextTemplate.fill(Localization.localize("Alerts from %s will reach you here."), host),
                urgency: .normal, postedAt: now, key: AlertStore.newKey(), host: host, late: false)
            let request = target.request(
                for: alert, raisedAt: WallClock.localMinute(now), localize: Localization.localizer, now: now, signer: MessageSignature.hmacSHA256)
            let poster = ForwardPoster(caFile: caFile, userAgent: "ccrelay/\(version)", loop: loop)
            posters.append(poster)
            poster.post(request) { answer in
                report(target, answer)
                left -= 1
                if left == 0 { withExtendedLifetime(posters) { done() } }
            }
        }
    }

    /// What `relay test` prints for `target`'s answer: the daemon's own
    /// verdict on it (`ForwardVerdict`), what the lanes would do with it.
    public static func line(_ target: ForwardTarget, _ answer: ForwardAnswer) -> String {
        let name = target.displayName
        let said = answer.text.isEmpty ? "" : ": " + answer.text
        let localize: (String) -> String = Localization.localize
        return switch answer.verdict {
        // A mail's status is the SMTP reply code (a 4xx there means: try later).
        case .delivered: TextTemplate.fill(localize("%s: delivered (%s %s)"), name, target.mail == nil ? "HTTP" : "SMTP", "\(answer.status)") + said
        // The target refuses everything (a wrong key, token or login): fix the URL.
        case .refused(let why): TextTemplate.fill(localize("%s: refused: %s"), name, why)
        // This message alone (too long, …): others would go.
        case .refusedForGood(let why): TextTemplate.fill(localize("%s: refused this message: %s"), name, why)
        case .retry(let why) where answer.status == 0: TextTemplate.fill(localize("%s: unreachable: %s"), name, why)
        case .retry(let why): TextTemplate.fill(localize("%s: not delivered: %s (the daemon would try again)"), name, why)
        }
    }
}
