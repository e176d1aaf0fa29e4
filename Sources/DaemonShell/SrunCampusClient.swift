import CCProtocol
import CCRelayCore
import CoreVocabulary
import CurlTransport
import EventLoop
import SrunProtocol

/// A Srun (深澜) portal as the daemon's campus client: the login is a
/// `rad_user_info` first (a device the portal already lets out — a MAC-bound
/// "无感认证" one, or a login from the portal's page — is online with no
/// login sent), the captcha check, then the challenge and the login; the
/// "keep-alive" is a `rad_user_info` check every `[srun] poll` seconds; the
/// logout `action=logout` or a signed `rad_user_dm`. Each answer in the
/// core's terms: a refusal with its `ProblemCode` and the portal's own
/// words, a session found gone as `.loggedOut(.portalEnded)`, the account's
/// facts (devices, traffic, quota) with every check.
///
/// With `[srun] ac-id = auto` the access controller is found from the
/// portal's redirect before the first login, once.
///
/// Confinement: used only on `loop`, like the `SrunClient` it owns.
final class SrunCampusClient: CampusClient {
    private let settings: SrunSettings
    private let portal: String
    private let userAgent: String
    private let loop: any EventScheduler
    private var base: SrunConfiguration
    /// The client for the access controller found (nil until `ac-id = auto` found it).
    private var client: SrunClient?
    /// Seconds between checks, and how long a session may go unchecked before it counts as lost (a day).
    private var poll: Int { settings.poll }
    static let sessionTimeout = 86_400

    /// Checks the configuration (each error naming its key); no request yet.
    init(configuration: Configuration, userAgent: String, loop: any EventScheduler) throws(ClientConfigurationError) {
        settings = configuration.srun
        portal = configuration.serverURL
        self.userAgent = userAgent
        self.loop = loop
        base = try Self.checked(configuration, localize: .english)
        if settings.acID != nil { client = try SrunClient(configuration: base, userAgent: userAgent, loop: loop) }
    }

    /// The Srun client's settings from the configuration, checked as the
    /// daemon and `ccrelay config check` check them (the portal's URL, the
    /// interface, the CA file); each error names its key, in `localize`'s language.
    static func checked(_ configuration: Configuration, localize: Localizer) throws(ClientConfigurationError) -> SrunConfiguration {
        let settings = configuration.srun
        let srun = SrunConfiguration(
            portal: configuration.serverURL, acID: settings.acID.map(String.init) ?? "1", domain: settings.domain,
            passwordDigest: settings.digest, doubleStack: settings.doubleStack,
            caFile: configuration.caFile, pinnedKey: configuration.pinnedKey, interface: configuration.interface)
        try SrunClient.check(srun, localize: localize)
        if let caFile = configuration.caFile {
            do throws(ClientConfigurationError) {
                try CredentialFiles.checkCertificateAuthorities(caFile, localize: localize)
            } catch {
                throw ClientConfigurationError(error.message, key: "server.ca-file")
            }
        }
        return srun
    }

    // MARK: Login

    func login(device: String, user: String?, password: String?, timeout: Duration, completion: @escaping (LoginResult) -> Void) {
        loggedInUser = user
        sentALogin = false
        withClient(timeout: timeout, completion: completion) { client in
            // Online already (a device the portal lets out by its MAC, a login from the page): nothing to send.
            client.userInfo(timeout: timeout) { exchange in
                switch exchange.outcome {
                case .answered(.online(let account)): return completion(self.granted(account))
                case .failed(let failure): return completion(self.failed(failure))
                case .answered(.offline): break
                }
                guard let user, let password else {
                    return completion(self.refused(.badPassword, code: .noPassword, words: nil, "Srun portals log in with a user and password"))
                }
                self.checkCaptchaThenLogIn(client, user: user, password: password, timeout: timeout, completion: completion)
            }
        }
    }

    private func checkCaptchaThenLogIn(_ client: SrunClient, user: String, password: String, timeout: Duration,
                                       completion: @escaping (LoginResult) -> Void) {
        do {
            try client.captchaRequired(user: user, timeout: timeout) { exchange in
                if case .answered(true) = exchange.outcome {
                    // Lifted by a person at the portal's page: checked again every poll, quietly.
                    return completion(LoginResult(
                        grant: nil,
                        problem: self.report(.captchaRequired, words: nil, "The portal asks for a picture captcha: log in once in a browser, then ccrelay carries on"),
                        droppedNotices: 0, answer: .blocked(.captchaRequired, message: nil, retryAfter: self.poll)))
                }
                // A portal without captchas answers 404 (read as a failure): the login decides.
                self.logIn(client, user: user, password: password, timeout: timeout, completion: completion)
            }
        } catch {
            completion(refused(.badPassword, code: .badCredentials, words: nil, error.description))
        }
    }

    private func logIn(_ client: SrunClient, user: String, password: String, timeout: Duration, completion: @escaping (LoginResult) -> Void) {
        sentALogin = true
        do {
            try client.login(user: user, password: password, timeout: timeout) { exchange in
                switch exchange.outcome {
                case .failed(let failure): completion(self.failed(failure))
                case .answered(.loggedIn(let grant)): self.grantedWithAccount(client, SrunAccount(userName: "", onlineIP: grant.onlineIP), timeout, completion)
                case .answered(.alreadyOnline(let ip)): self.grantedWithAccount(client, SrunAccount(userName: "", onlineIP: ip), timeout, completion)
                case .answered(.refused(.maybeOnline, let words)):
                    // no_response_data_error: the login may have worked; the portal's own word decides.
                    client.userInfo(timeout: timeout) { check in
                        if case .answered(.online(let account)) = check.outcome { return completion(self.granted(account)) }
                        completion(self.transient(.serverError, words: words, "The portal did not say whether the login worked"))
                    }
                case .answered(.refused(let refusal, let words)): completion(self.refusal(refusal, words: words))
                }
            }
        } catch .passwordNotASCII {
            completion(refused(.badPassword, code: .badCredentials, words: nil, SrunRequestError.passwordNotASCII.description))
        } catch {
            completion(refused(.badPassword, code: .badCredentials, words: nil, error.description))
        }
    }

    /// A granted login, with the account as `rad_user_info` shows it now (the status has it at once; the login's answer has none).
    private func grantedWithAccount(_ client: SrunClient, _ fallback: SrunAccount, _ timeout: Duration, _ completion: @escaping (LoginResult) -> Void) {
        client.userInfo(timeout: timeout) { exchange in
            if case .answered(.online(let account)) = exchange.outcome { return completion(self.granted(account)) }
            completion(self.granted(fallback))
        }
    }

    /// A session the portal grants (or already had): checked every `poll` seconds from now.
    private func granted(_ account: SrunAccount) -> LoginResult {
        LoginResult(
            grant: LoginResult.Grant(token: Self.token, ip: account.onlineIP ?? "", location: .none), problem: nil, droppedNotices: 0,
            answer: .loggedIn(interval: poll, timeout: Self.sessionTimeout, notices: []), account: Self.facts(account))
    }

    /// What stands for the session token: Srun has none (the gateway knows the address).
    static let token = "srun-session"

    private func refusal(_ refusal: SrunRefusal, words: String) -> LoginResult {
        switch refusal {
        case .badCredentials: refused(.badPassword, code: .badCredentials, words: words, "The portal refused the user name or password")
        case .onlineElsewhere:
            refused(.onlineElsewhere, code: .onlineElsewhere, words: words, "The account is online on another device (or a stale session holds it)")
        case .quotaExhausted: refused(.quotaExhausted, code: .quotaExhausted, words: words, "The account's traffic, time or balance is used up")
        case .accountDisabled: refused(.accountDisabled, code: .accountDisabled, words: words, "The campus network account is disabled")
        case .portalMisconfigured:
            refused(.portalMisconfigured, code: .portalMisconfigured, words: words,
                    "The portal does not know this access point: check [srun] ac-id (auto finds it)")
        case .permanent: refused(.portalRefused, code: .portalRefused, words: words, "The portal refused the login for a reason only campus IT can change")
        case .rateLimited(let after):
            LoginResult(grant: nil, problem: report(.rateLimited, words: words, "The portal asked to wait between logins"), droppedNotices: 0,
                        answer: .rateLimited(retryAfter: Int((after / .seconds(1)).rounded(.up))))
        case .challengeExpired, .protocolError: transient(.protocolError, words: words, "The portal did not take the login as ccrelay made it")
        case .transient, .serverError, .unknown, .maybeOnline: transient(.serverError, words: words, "The portal refused the login for now")
        }
    }

    private func refused(_ problem: CredentialProblem, code: ProblemCode, words: String?, _ sentence: String) -> LoginResult {
        LoginResult(grant: nil, problem: report(code, words: words, sentence), droppedNotices: 0, answer: .refused(problem, message: words))
    }

    private func transient(_ code: ProblemCode, words: String, _ sentence: String) -> LoginResult {
        LoginResult(grant: nil, problem: report(code, words: words, sentence), droppedNotices: 0, answer: .transientFailure(words))
    }

    private func failed(_ failure: TransportFailure) -> LoginResult {
        LoginResult(grant: nil, problem: failure.problem, droppedNotices: 0, answer: ExchangeReading.loginAnswer(failing: failure))
    }

    private func report(_ code: ProblemCode, words: String?, _ sentence: String) -> ProblemReport {
        ProblemReport(code: code, sentence: sentence + (words.map { $0.isEmpty ? "." : " (the portal said: \($0))." } ?? "."))
    }

    // MARK: Checks and logout

    func check(session token: String, seq: UInt64, location: LocationFix?, timeout: Duration, completion: @escaping (KeepAliveResult) -> Void) {
        guard let client else {
            return completion(KeepAliveResult(problem: nil, droppedNotices: 0, locationRejected: nil, answer: .transientFailure("no portal yet")))
        }
        client.userInfo(timeout: timeout) { exchange in
            switch exchange.outcome {
            case .answered(.online(let account)):
                completion(KeepAliveResult(
                    problem: nil, droppedNotices: 0, locationRejected: nil, answer: .accepted(interval: nil, timeout: nil, notices: []),
                    account: Self.facts(account)))
            case .answered(.offline):
                // rad_user_info never says why: an idle cut, the quota, an admin, a newer device.
                completion(KeepAliveResult(
                    problem: ProblemReport(code: .loggedOut, sentence: "The portal ended the session; Srun portals give no reason."),
                    droppedNotices: 0, locationRejected: nil, answer: .loggedOut(reason: .portalEnded, message: nil)))
            case .failed(let failure):
                completion(KeepAliveResult(
                    problem: failure.problem, droppedNotices: 0, locationRejected: nil, answer: ExchangeReading.keepAliveAnswer(failing: failure)))
            }
        }
    }

    func logout(session token: String, timeout: Duration, completion: @escaping () -> Void) {
        guard let client, let user = loggedInUser else { return completion() }
        do {
            try client.logout(settings.logout == .dm ? .dm : .portal, user: user, timeout: timeout) { _ in completion() }
        } catch {
            completion()
        }
    }

    /// The user of the last login (a logout names it).
    private var loggedInUser: String?
    /// Whether the last login sent one to the portal (not so when the portal had this computer online already).
    private(set) var sentALogin = false

    func dropConnection(completion: @escaping () -> Void) {
        guard let client else { return completion() }
        client.dropConnection(completion: completion)
    }

    // MARK: The access controller

    /// Runs `body` with the client, finding the access controller first
    /// (`ac-id = auto`) from the portal's redirect; a portal that shows none
    /// is a login refused for `[srun] ac-id`.
    private func withClient(timeout: Duration, completion: @escaping (LoginResult) -> Void, _ body: @escaping (SrunClient) -> Void) {
        if let client { return body(client) }
        do {
            let finder = try SrunClient(configuration: base, userAgent: userAgent, loop: loop)
            try finder.discover(from: portal, timeout: timeout) { exchange in
                withExtendedLifetime(finder) {}
                switch exchange.outcome {
                case .failed(let failure): completion(self.failed(failure))
                case .answered(let found):
                    guard let acID = found.acID, Int(acID) != nil else {
                        return completion(self.refused(
                            .portalMisconfigured, code: .portalMisconfigured, words: nil,
                            "The portal at \(self.portal) named no access controller: set [srun] ac-id to the ac_id= of the portal page's address"))
                    }
                    var found = self.base
                    found.acID = acID
                    do throws(ClientConfigurationError) {
                        let client = try SrunClient(configuration: found, userAgent: self.userAgent, loop: self.loop)
                        self.client = client
                        body(client)
                    } catch {
                        completion(self.refused(.portalMisconfigured, code: .portalMisconfigured, words: nil, error.message))
                    }
                }
            }
        } catch {
            completion(refused(.portalMisconfigured, code: .portalMisconfigured, words: nil, "\(error)"))
        }
    }

    // MARK: The account

    /// The account's facts as the status shows them: addresses cut, balances only when positive.
    static func facts(_ account: SrunAccount) -> AccountFacts {
        AccountFacts(
            devices: account.deviceTotal,
            deviceList: account.devices.prefix(16).map { device in
                AccountFacts.Device(kind: String((device.className.isEmpty ? device.osName : device.className).prefix(32)),
                                    address: device.ip.map(AccountFacts.cut) ?? device.ip6.map(AccountFacts.cut) ?? "?")
            },
            usedBytes: account.sumBytes, usedSeconds: account.sumSeconds, remainBytes: account.remainBytes.flatMap { $0 > 0 ? $0 : nil },
            balance: [account.userBalance, account.walletBalance].compactMap { $0 }.first { $0 > 0 },
            onlineIP: account.onlineIP.map(AccountFacts.cut))
    }
}
