import CCProtocol
import CCRelayCore
import CoreVocabulary
import CurlTransport
import DesktopServices
import EventLoop

/// `ccrelay setup`'s trial of its answers: one login through the protocol
/// the configuration names, and the logout of what that login won (a Srun
/// portal that had this computer online already is left as it was: the
/// trial sent no login, and a logout would end a live session).
public enum CampusTrial {
    /// What the trial found: logged in (and out again), with a sentence to
    /// print; or not, with the problem and its code.
    public enum Outcome: Sendable {
        case loggedIn(String)
        case refused(sentence: String, code: ProblemCode?)
    }

    /// Runs the trial on `loop`; `done` runs there once it is over.
    public static func run(_ configuration: Configuration, password: String?, version: String, loop: any EventScheduler,
                           done: @escaping (Outcome) -> Void) throws(ClientConfigurationError) {
        let client: any CampusClient =
            switch configuration.serverProtocol {
            case .cc1:
                CCCampusClient(try CCClient(
                    configuration: ConfigurationCheck.serverConfiguration(configuration), client: ClientInfo(version: version), loop: loop))
            case .srun: try SrunCampusClient(configuration: configuration, userAgent: "ccrelay/\(version)", loop: loop)
            }
        client.login(device: DaemonProcess.deviceName, user: configuration.user, password: password, timeout: .seconds(60)) { result in
            guard let grant = result.grant, case .loggedIn(let interval, _, _) = result.answer else {
                return done(.refused(sentence: result.problem?.sentence ?? Localization.localize("no answer"), code: result.problem?.code))
            }
            if let srun = client as? SrunCampusClient, !srun.sentALogin {
                return done(.loggedIn(TextTemplate.fill(
                    Localization.localize("The portal has this computer online already (outside access for %s); ccrelay left it so."), grant.ip)))
            }
            let sentence = configuration.serverProtocol == .srun
                ? TextTemplate.fill(Localization.localize("The portal logged you in (outside access for %s); logged out again."), grant.ip)
                : TextTemplate.fill(
                    Localization.localize("The server logged you in (outside access for %s, a keep-alive every %s s); logged out again."),
                    grant.ip, String(interval))
            client.logout(session: grant.token, timeout: .seconds(15)) {
                withExtendedLifetime(client) { done(.loggedIn(sentence)) }
            }
        }
    }
}
