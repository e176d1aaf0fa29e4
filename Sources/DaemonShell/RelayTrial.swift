import AlertJournal
import CurlTransport
import CCProtocol
import DesktopServices
import EventLoop
import CCRelayCore
import CoreVocabulary

/// `ccrelay relay test [TARGET]`: a test message to each configured relay
/// target (or the ones `TARGET` names: a service such as `ntfy`, or the
/// start of a target's URL), through the daemon's own request code, each
/// target's answer reported as it comes. Nothing is journaled or queued.
public enum ForwardTrial {
    /// The targets `name` selects (all when nil).
    public static func targets(_ configuration: Configuration, matching name: String?) -> [ForwardTarget] {
        guard let name else { return configuration.forwardTargets }
        return configuration.forwardTargets.filter {
            $0.service.rawValue == name || $0.url.hasPrefix(name) || $0.displayName == name
        }
    }

    /// Sends the test message to `targets` on `loop`; `report` hears each
    /// answer (the target without secrets, and whether it was delivered), then `done`.
    public static func run(_ targets: [ForwardTarget], caFile: String?, version: String, loop: any EventScheduler,
                           report: @escaping (String, ForwardAnswer) -> Void, done: @escaping () -> Void) {
        let host = DaemonProcess.deviceName
        let now = loop.wallClock
        var left = targets.count
        var posters: [ForwardPoster] = []
        for target in targets {
            let alert = ForwardedAlert(
                kind: .notice, title: Localization.localize("CC Relay test message"),
                body: TextTemplate.fill(Localization.localize("Alerts from %s will reach you here."), host),
                urgency: .normal, postedAt: now, key: AlertStore.newKey(), host: host, late: false)
            let request = ForwardMessage.request(
                alert, to: target, raisedAt: WallClock.localMinute(now), localize: Localization.localizer, now: now,
                hmacSHA256: MessageSignature.hmacSHA256)
            let poster = ForwardPoster(caFile: caFile, userAgent: "ccrelay/\(version)", loop: loop)
            posters.append(poster)
            poster.post(request) { answer in
                report(target.displayName, answer)
                left -= 1
                if left == 0 { withExtendedLifetime(posters) { done() } }
            }
        }
    }
}
