import CCRelayCore
import CurlTransport
import DaemonShell
import EventLoop
import SrunProtocol

/// `ccrelay doctor`'s `portal` line — which portal family this network puts
/// in front of an anonymous request, even one ccrelay cannot log in to — and
/// the `server` line of a Srun configuration (a `rad_user_info`, never a login).
extension Diagnose {
    /// The longest the Srun portal's `rad_user_info` may take.
    static let srunServerTimeout = Duration.seconds(8)

    /// The configured Srun portal's `server` line.
    static func srunServer(_ configuration: Configuration, userAgent: String, loop: any EventScheduler, done: @escaping ([String]) -> Void) {
        let portal = configuration.serverURL
        do throws(ClientConfigurationError) {
            try SrunServerCheck.run(configuration, userAgent: userAgent, timeout: srunServerTimeout, loop: loop) { outcome in
                switch outcome {
                case .answered(let answer):
                    let version = answer.serverVersion.map { ", \($0)" } ?? ""
                    let state =
                        if answer.online {
                            "this computer is online" + (answer.address.map { " at \($0)" } ?? "")
                                + (answer.devices.map { " (\($0) on the account)" } ?? "")
                        } else {
                            "this computer is not online" + (answer.address.map { " (the portal sees \($0))" } ?? "")
                        }
                    done([line("server", "ok", "Srun portal \(portal): rad_user_info answered\(version): \(state); no login sent")])
                case .failed(let failure):
                    done([line("server", "fail", "Srun portal \(portal): \(PortalSurvey.words(failure))",
                               fix: "check [server] url (the portal's address, such as http://10.0.0.55/), the network (ip route) and [server] interface")])
                }
            }
        } catch {
            done([line("server", "fail", error.message, fix: "edit the file, or: ccrelay setup --edit")])
        }
    }

    /// Asks what stands in front of an anonymous request: for a Srun
    /// configuration its portal's own address (a portal whose computer is
    /// online already redirects no other page), else the outside probe's
    /// URLs (none with `[probe] mode = off`).
    static func survey(_ configuration: Configuration, userAgent: String, loop: any EventScheduler,
                       done: @escaping (PortalSurvey.Outcome) -> Void) {
        let srun = configuration.serverProtocol == .srun
        let urls = srun ? [configuration.serverURL] : configuration.probeEnabled ? configuration.probeURLs : []
        PortalSurvey.run(
            urls: urls, interface: configuration.interface, caFile: configuration.caFile, user: srun ? configuration.user : nil,
            domain: srun ? configuration.srun.domain : "", budget: deadline - .seconds(1), userAgent: userAgent, loop: loop, done: done)
    }

    /// The `portal` line: the family the survey found (CC/1 when the
    /// configuration is CC/1 and its server answered), with a Srun portal's
    /// `ac_id`, version and captcha; a family ccrelay cannot log in to is a warning.
    static func portal(_ configuration: Configuration, _ outcome: PortalSurvey.Outcome, serverReached: Bool) -> String {
        let cc1 = configuration.serverProtocol == .cc1 && serverReached
        let browser = "log in through the portal's page in a browser (ccrelay speaks CC/1 and Srun)"
        switch outcome {
        case .unreachable(let from, let why):
            let asked = from.isEmpty ? "no URL asked ([probe] mode = off)" : "\(from) did not answer: \(why)"
            return cc1 ? line("portal", "ok", "CC/1: the CC server answers; \(asked)") : line("portal", "warn", "unknown: \(asked)")
        case .found(let facts):
            let landing = facts.landing ?? facts.from
            switch facts.family {
            case .srun: return srun(configuration, facts, cc1: cc1)
            case .ruijie: return line("portal", "warn", "Ruijie ePortal (锐捷) at \(landing): ccrelay cannot log in to it", fix: browser)
            case .drcom: return line("portal", "warn", "Dr.COM (城市热点) at \(landing): ccrelay cannot log in to it", fix: browser)
            case .none:
                return line("portal", "ok", (cc1 ? "CC/1: the CC server answers; " : "none: ") + "\(facts.from) answered itself (no portal in the way)")
            case .other:
                let seen = "\(facts.from) led to \(landing), a page of no portal family ccrelay knows"
                return cc1 ? line("portal", "ok", "CC/1: the CC server answers; \(seen)") : line("portal", "warn", "unknown: \(seen)")
            }
        }
    }

    /// A Srun portal: its address, `ac_id`, version and captcha, checked against the configuration.
    private static func srun(_ configuration: Configuration, _ facts: PortalFacts, cc1: Bool) -> String {
        let captcha = facts.captcha.map { $0 ? "captcha on" : "no captcha" } ?? "captcha not checked"
        let text = "Srun (深澜) at \(facts.portal ?? facts.landing ?? facts.from) (ac_id \(facts.acID ?? "not shown"), "
            + "\(facts.serverVersion ?? "version not said"), \(captcha))"
        switch configuration.serverProtocol {
        case .cc1:
            if cc1 { return line("portal", "ok", text + "; the CC server answers too") }
            return line("portal", "warn", text + ": the configuration speaks CC/1", fix: "ccrelay setup --protocol srun --edit")
        case .srun:
            if let configured = configuration.srun.acID, let found = facts.acID, found != String(configured) {
                return line("portal", "warn", text + ": [srun] ac-id says \(configured)", fix: "set [srun] ac-id = \(found) (or auto)")
            }
            if facts.captcha == true {
                return line("portal", "warn", text, fix: "log in once through the portal's page in a browser; ccrelay carries on")
            }
            return line("portal", "ok", text)
        }
    }
}
