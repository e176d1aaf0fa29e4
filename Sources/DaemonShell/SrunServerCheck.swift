import CCRelayCore
import CurlTransport
import EventLoop
import SrunProtocol

/// `ccrelay doctor`'s `server` line for a Srun configuration: one
/// `rad_user_info` to the configured portal, with the daemon's own
/// transport settings — a look that changes nothing (never a login).
public enum SrunServerCheck {
    /// What the portal said.
    public struct Answer: Sendable, Hashable {
        /// A session is online at this address.
        public var online: Bool
        /// The address the portal sees this computer at (valid, or nil).
        public var address: String?
        /// `srun_ver`, cleaned.
        public var serverVersion: String?
        /// The account's sessions, when online and the portal says.
        public var devices: Int?
    }

    /// The answer, or why there was none.
    public enum Outcome: Sendable, Hashable {
        case answered(Answer)
        case failed(TransportFailure)
    }

    /// Asks the portal the configuration names, on `loop`; `done` runs there
    /// once, within `timeout`. Throws, asking nothing, for a configuration
    /// the daemon would refuse (each error names its key).
    public static func run(_ configuration: Configuration, userAgent: String, timeout: Duration, loop: any EventScheduler,
                           done: @escaping (Outcome) -> Void) throws(ClientConfigurationError) {
        let client = try SrunClient(configuration: SrunCampusClient.checked(configuration, localize: .english), userAgent: userAgent, loop: loop)
        client.portalStatus(timeout: timeout) { exchange in
            withExtendedLifetime(client) {
                switch exchange.outcome {
                case .failed(let failure): done(.failed(failure))
                case .answered(let status):
                    switch status.userInfo {
                    case .online(let account):
                        done(.answered(Answer(online: true, address: account.onlineIP, serverVersion: status.serverVersion,
                                             devices: account.deviceTotal)))
                    case .offline(let clientIP):
                        done(.answered(Answer(online: false, address: clientIP, serverVersion: status.serverVersion)))
                    }
                }
            }
        }
    }
}
