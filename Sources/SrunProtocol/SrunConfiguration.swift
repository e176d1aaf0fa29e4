import CCRelayCore
import CoreVocabulary
import CurlTransport
#if canImport(Glibc)
import Glibc
#endif

/// Where a Srun portal is and what its logins say: the `[srun]` facts of
/// the configuration (and `[server]`'s transport ones) that the client needs.
public struct SrunConfiguration: Sendable, Hashable {
    /// The portal's base URL: `http://10.0.0.55/` (most campuses), `https://portal.example.edu.cn/`.
    public var portal: String
    /// The access controller's number (`ac_id`): digits.
    public var acID: String
    /// Appended to the user name, as the portal's domain list does (`@cmcc`); empty for none.
    public var domain: String
    public var passwordDigest: SrunSettings.Digest
    /// This computer's address to log in; nil: the one the portal sees (the challenge's `client_ip`).
    public var ip: String?
    /// `double_stack=1` (Tsinghua); 0 elsewhere.
    public var doubleStack: Bool
    /// What the login says this device (`os`) and platform (`name`) are. Some campuses count sessions per kind.
    public var os: String
    public var platform: String
    /// A campus CA file for an https portal; nil means the system trust store.
    public var caFile: String?
    /// `sha256//BASE64=` public-key pin of an https portal, checked on top of the CA.
    public var pinnedKey: String?
    /// Bind the requests to this network interface (`[server] interface`).
    public var interface: String?
    /// Time to set up a connection.
    public var connectTimeout: Duration
    /// Longest time one request may take: 20 s, as one portal answers every challenge after 16 s.
    public var requestTimeout: Duration
    /// Longest time a whole operation may take (a login: challenge, login,
    /// and once more after an expired challenge) unless its caller gives one: 60 s.
    public var operationTimeout: Duration

    public init(portal: String, acID: String, domain: String = "", passwordDigest: SrunSettings.Digest = .hmac, ip: String? = nil,
                doubleStack: Bool = false, os: String = "Linux", platform: String = "Linux", caFile: String? = nil, pinnedKey: String? = nil,
                interface: String? = nil, connectTimeout: Duration = .seconds(5), requestTimeout: Duration = .seconds(20),
                operationTimeout: Duration = .seconds(60)) {
        self.portal = portal
        self.acID = acID
        self.domain = domain
        self.passwordDigest = passwordDigest
        self.ip = ip
        self.doubleStack = doubleStack
        self.os = os
        self.platform = platform
        self.caFile = caFile
        self.pinnedKey = pinnedKey
        self.interface = interface
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.operationTimeout = operationTimeout
    }

    /// The portal's base URL with one trailing slash, once every setting is
    /// checked; each error names its configuration key, in `localize`'s language.
    func checked(localize: Localizer) throws(ClientConfigurationError) -> SrunURL {
        guard let url = SrunURL(portal), url.isWeb else {
            throw ClientConfigurationError(
                TextTemplate.fill(localize("url '%s' is not an http:// or https:// URL; write the portal's address like http://10.0.0.55/"),
                                  SrunText.clean(portal, limit: 200)),
                key: "server.url")
        }
        guard !url.hasCredentials, !url.hasQueryOrFragment else {
            throw ClientConfigurationError(localize("url must be the portal's base URL, without user, query or fragment"), key: "server.url")
        }
        guard SrunText.isDigits(acID) else {
            throw ClientConfigurationError(
                localize("[srun] ac-id must be the portal's ac_id number (the digits after ac_id= in the portal page's address)"), key: "srun.ac-id")
        }
        guard domain.isEmpty || SrunText.isToken(domain, limit: 64) else {
            throw ClientConfigurationError(localize("[srun] domain must be printable ASCII without spaces, such as @cmcc"), key: "srun.domain")
        }
        if let ip, SrunText.address(ip) == nil {
            throw ClientConfigurationError(localize("[srun] ip must be an IPv4 or IPv6 address, or left out"), key: "srun.ip")
        }
        for (name, value) in [("os", os), ("platform", platform)]
        where !(1...64).contains(value.utf8.count) || !value.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) {
            throw ClientConfigurationError(TextTemplate.fill(localize("[srun] %s must be 1–64 printable ASCII characters"), name), key: "srun.\(name)")
        }
        if let interface, if_nametoindex(interface) == 0 {
            throw ClientConfigurationError(
                TextTemplate.fill(localize("there is no network interface '%s' (ip link lists them); fix [server] interface or remove it"), interface),
                key: "server.interface")
        }
        return url
    }
}
