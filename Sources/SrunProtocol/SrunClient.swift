import CCurl
import CoreVocabulary
import CurlTransport
import EventLoop

/// The Srun portal client: one reused libcurl easy handle in a multi handle
/// on the caller's event loop, so every request to the portal travels on
/// one kept-alive connection and the loop never blocks on the network.
///
/// Operations run one at a time, in the order they were asked for; each may
/// make several requests (a login: the challenge, then the login, and both
/// again once after `challenge_expire_error`), each request bounded by
/// `requestTimeout` and the whole by the operation's timeout. Completions
/// run on `loop`, never inside the call that asked. Transport: plain http to
/// any address (portals are plain http on the campus network), https with
/// the CC client's verified TLS (CA file, pinned key), never a proxy,
/// never a redirect followed (but by `discover`, by hand), bound to
/// `[server] interface`. Nothing is logged here: the login's URL carries
/// `info`, which the challenge's token opens, and is never shown.
///
/// Its owner keeps it: a client released with operations in flight or
/// waiting drops them, and their completions never run.
///
/// Confinement (why `@unchecked Sendable` is sound): every mutable property
/// is used only on `loop`.
public final class SrunClient: @unchecked Sendable {
    public let configuration: SrunConfiguration
    public let loop: any EventScheduler
    /// The portal's base URL, with one trailing slash.
    private let base: String
    private let scheme: String
    private let userAgent: String
    private var easy: CurlEasy
    private var multi: CurlMulti?
    /// The operation in flight and what waits behind it.
    private let queue = ExchangeQueue()
    /// The address the portal last said this computer has (checked): for a logout's `ip`.
    private var knownIP: String?
    /// An answer that is ready at once still comes after the call returned.
    private lazy var later = LaterOnLoop(loop: loop)

    /// What an operation's requests came to so far.
    private struct Tally {
        let deadline: Duration
        var status = 0
        var opened = 0
        var requests = 0

        func exchange<Answer>(_ outcome: SrunOutcome<Answer>) -> SrunExchange<Answer> {
            SrunExchange(outcome: outcome, httpStatus: status, connectionsOpened: opened, requests: requests)
        }
    }

    /// What one request brought.
    private struct Fetched {
        var status = 0
        var body: [UInt8] = []
        /// Where a 3xx answer points, as libcurl resolved it.
        var redirect: String?
        var failure: TransportFailure?
    }

    /// Checks the configuration (each error names its key) and prepares the handle; runs on `loop` from then on.
    /// (The user heard of a problem from `check` already, in their language: one found here again is said in English, for the log.)
    public init(configuration: SrunConfiguration, userAgent: String, loop: any EventScheduler) throws(ClientConfigurationError) {
        let url = try configuration.checked(localize: .english)
        self.configuration = configuration
        self.loop = loop
        self.userAgent = userAgent
        base = url.text.hasSuffix("/") ? url.text : url.text + "/"
        scheme = url.scheme
        easy = try Self.makeHandle(configuration, scheme: url.scheme, userAgent: userAgent)
    }

    /// The checks a configuration passes before it is used (by the daemon at start, by `ccrelay config check`);
    /// a refusal is said in `localize`'s language.
    public static func check(_ configuration: SrunConfiguration, localize: Localizer) throws(ClientConfigurationError) {
        _ = try configuration.checked(localize: localize)
    }

    /// A handle for the portal, or (`pinned` false) for a page on the way to it, which the portal's pinned key does not fit.
    private static func makeHandle(_ configuration: SrunConfiguration, scheme: String, userAgent: String, pinned: Bool = true)
        throws(ClientConfigurationError) -> CurlEasy
    {
        let easy = CurlEasy()
        try easy.setServerTransport(
            scheme: scheme, caFile: configuration.caFile, userAgent: userAgent, loopbackOnlyForHTTP: false,
            connectTimeout: configuration.connectTimeout, pinnedKey: pinned && scheme == "https" ? configuration.pinnedKey : nil,
            interface: configuration.interface)
        return easy
    }

    // MARK: Operations

    /// `get_challenge`, then `srun_portal?action=login` with the values made
    /// from its token; after `challenge_expire_error`, once more with a fresh
    /// challenge. Throws, sending nothing, for a user name or password the
    /// portal could not take (a non-ASCII password above all).
    public func login(user: String, password: String, timeout: Duration? = nil,
                      completion: @escaping (SrunExchange<SrunLoginAnswer>) -> Void) throws(SrunRequestError) {
        try SrunRequestError.check(user: user, password: password)
        enqueue(timeout, completion: completion) { client, tally, finish in
            client.login(username: user + client.configuration.domain, password: password, retry: true, tally: tally, finish: finish)
        }
    }

    private func login(username: String, password: String, retry: Bool, tally: Tally,
                       finish: @escaping (SrunOutcome<SrunLoginAnswer>, Tally) -> Void) {
        var items = [(name: "username", value: username), (name: "ip", value: configuration.ip ?? "")]
        if configuration.doubleStack { items.append((name: "double_stack", value: "1")) }
        call("cgi-bin/get_challenge", items, tally: tally, read: SrunChallenge.read) { outcome, tally in
            let challenge: SrunChallenge
            switch outcome {
            case .failed(let failure): return finish(.failed(failure), tally)
            case .answered(.refused(let refusal, let words)): return finish(.answered(.refused(refusal, words: words)), tally)
            case .answered(.issued(let issued)): challenge = issued
            }
            self.knownIP = challenge.clientIP ?? self.knownIP
            let form = SrunLoginForm(
                username: username, password: password, token: challenge.token, ip: self.configuration.ip ?? challenge.clientIP ?? "",
                acID: self.configuration.acID, digest: self.configuration.passwordDigest)
            let parameters = form.parameters(doubleStack: self.configuration.doubleStack, os: self.configuration.os,
                                             platform: self.configuration.platform)
            self.call("cgi-bin/srun_portal", parameters, tally: tally, read: SrunLoginAnswer.read) { outcome, tally in
                if retry, case .answered(.refused(.challengeExpired, _)) = outcome {
                    return self.login(username: username, password: password, retry: false, tally: tally, finish: finish)
                }
                if case .answered(.loggedIn(let grant)) = outcome { self.knownIP = grant.onlineIP ?? self.knownIP }
                finish(outcome, tally)
            }
        }
    }

    /// `rad_user_info`: whether a session is online at this address, and its account's facts.
    public func userInfo(timeout: Duration? = nil, completion: @escaping (SrunExchange<SrunUserInfo>) -> Void) {
        enqueue(timeout, completion: completion) { client, tally, finish in client.userInfo(tally: tally, finish: finish) }
    }

    private func userInfo(tally: Tally, finish: @escaping (SrunOutcome<SrunUserInfo>, Tally) -> Void) {
        call("cgi-bin/rad_user_info", configuration.ip.map { [(name: "ip", value: $0)] } ?? [], tally: tally, read: SrunUserInfo.read) {
            outcome, tally in
            switch outcome {
            case .answered(.online(let account)): self.knownIP = account.onlineIP ?? self.knownIP
            case .answered(.offline(let clientIP)): self.knownIP = clientIP ?? self.knownIP
            case .failed: break
            }
            finish(outcome, tally)
        }
    }

    /// `rad_user_info` as `userInfo` asks it, with the portal's `srun_ver`:
    /// a look at the portal that changes nothing (`ccrelay doctor`).
    public func portalStatus(timeout: Duration? = nil, completion: @escaping (SrunExchange<SrunPortalStatus>) -> Void) {
        enqueue(timeout, completion: completion) { client, tally, finish in
            client.call("cgi-bin/rad_user_info", client.configuration.ip.map { [(name: "ip", value: $0)] } ?? [], tally: tally,
                        read: SrunPortalStatus.read, completion: finish)
        }
    }

    /// Ends the session: `.portal` sends `action=logout` (no password);
    /// `.dm` the signed `rad_user_dm` for `user` without the domain (asking
    /// `rad_user_info` first when this computer's address is not known yet,
    /// as the sign covers it).
    public func logout(_ method: SrunLogoutMethod, user: String, timeout: Duration? = nil,
                       completion: @escaping (SrunExchange<SrunLogoutAnswer>) -> Void) throws(SrunRequestError) {
        guard SrunText.isToken(user, limit: 128) else { throw .userUnusable }
        enqueue(timeout, completion: completion) { client, tally, finish in
            let ip = client.configuration.ip ?? client.knownIP
            switch method {
            case .portal:
                client.call("cgi-bin/srun_portal",
                            SrunLogoutForm.portal(username: user + client.configuration.domain, acID: client.configuration.acID, ip: ip ?? ""),
                            tally: tally, read: SrunLogoutAnswer.read, completion: finish)
            case .dm:
                if let ip { return client.signedLogout(user: user, ip: ip, tally: tally, finish: finish) }
                client.userInfo(tally: tally) { outcome, tally in
                    switch outcome {
                    case .failed(let failure): finish(.failed(failure), tally)
                    case .answered(.offline): finish(.answered(.notOnline), tally)
                    case .answered(.online(let account)):
                        guard let ip = account.onlineIP else {
                            return finish(.failed(.protocolError("rad_user_info gave no valid online_ip to sign the logout with")), tally)
                        }
                        client.signedLogout(user: user, ip: ip, tally: tally, finish: finish)
                    }
                }
            }
        }
    }

    private func signedLogout(user: String, ip: String, tally: Tally, finish: @escaping (SrunOutcome<SrunLogoutAnswer>, Tally) -> Void) {
        call("cgi-bin/rad_user_dm", SrunLogoutForm.dm(username: user, ip: ip, time: Int64(WallClock.now())), tally: tally,
             read: SrunLogoutAnswer.read, completion: finish)
    }

    /// `/v2/srun_portal_captcha_image_info`: true when the portal wants a
    /// picture captcha (a person must log in through the page); a 404 is none.
    public func captchaRequired(user: String, timeout: Duration? = nil, completion: @escaping (SrunExchange<Bool>) -> Void) throws(SrunRequestError) {
        guard SrunText.isToken(user, limit: 128) else { throw .userUnusable }
        enqueue(timeout, completion: completion) { client, tally, finish in
            let query = SrunQuery.string([("user_name", user + client.configuration.domain), ("ip", client.configuration.ip ?? client.knownIP ?? "")])
            client.get(client.base + "v2/srun_portal_captcha_image_info?" + query, on: client.easy, tally: tally) { fetched, tally in
                if let failure = fetched.failure { return finish(.failed(failure), tally) }
                switch SrunCaptcha.read(status: fetched.status, body: fetched.body) {
                case .success(let required): finish(.answered(required), tally)
                case .failure(let problem): finish(.failed(.protocolError(problem.text)), tally)
                }
            }
        }
    }

    /// Finds the portal from `url` (a plain-http page the portal intercepts):
    /// anonymous GETs, each on a fresh handle (https verified against the
    /// configured CA file, without the portal's pinned key), following a
    /// redirect by hand at most `PortalTrail.hopLimit` times (`PortalTrail`
    /// reads each answer). A failure after the first answer ends the trail
    /// with what it showed.
    public func discover(from url: String, timeout: Duration? = nil,
                         completion: @escaping (SrunExchange<PortalDiscovery>) -> Void) throws(SrunRequestError) {
        guard let trail = PortalTrail(start: url) else { throw .discoveryURLUnusable }
        enqueue(timeout, completion: completion) { client, tally, finish in client.follow(trail, tally: tally, finish: finish) }
    }

    private func follow(_ trail: PortalTrail, tally: Tally, finish: @escaping (SrunOutcome<PortalDiscovery>, Tally) -> Void) {
        let first = trail.discovery.trail.count == 1
        let easy: CurlEasy
        do throws(ClientConfigurationError) {
            easy = try Self.makeHandle(configuration, scheme: SrunURL(trail.current)?.scheme ?? "http", userAgent: userAgent, pinned: false)
        } catch {
            return later.run { finish(first ? .failed(.protocolError(error.description)) : .answered(trail.discovery), tally) }
        }
        get(trail.current, on: easy, tally: tally, keepingPartialBody: true) { fetched, tally in
            var trail = trail
            if let failure = fetched.failure { return finish(first ? .failed(failure) : .answered(trail.discovery), tally) }
            guard trail.read(status: fetched.status, location: fetched.redirect, body: fetched.body) != nil else {
                return finish(.answered(trail.discovery), tally)
            }
            self.follow(trail, tally: tally, finish: finish)
        }
    }

    /// Drops the kept connection in turn (on `loop`); the next request opens
    /// a fresh one (after a resume from sleep, or a network change). Then `completion`.
    public func dropConnection(completion: @escaping () -> Void) {
        loop.preconditionIsCurrent("the Srun client")
        queue.add { [weak self] in
            self?.replaceHandles()
            completion()
        }
    }

    // MARK: Requests

    /// Queues an operation; it gets its deadline when it starts.
    private func enqueue<Answer>(_ timeout: Duration?, completion: @escaping (SrunExchange<Answer>) -> Void,
                                 _ operation: @escaping (SrunClient, Tally, @escaping (SrunOutcome<Answer>, Tally) -> Void) -> Void) {
        loop.preconditionIsCurrent("the Srun client")
        queue.add { [weak self] over in
            guard let self else { return }
            operation(self, Tally(deadline: self.loop.now + (timeout ?? self.configuration.operationTimeout))) { outcome, tally in
                completion(tally.exchange(outcome))
                over()
            }
        }
    }

    /// A fresh easy handle and multi handle: the kept connection closes with the old multi handle.
    private func replaceHandles() {
        multi = nil
        // The same configuration was accepted once, so it is accepted again.
        if let fresh = try? Self.makeHandle(configuration, scheme: scheme, userAgent: userAgent) { easy = fresh }
    }

    /// One JSONP request to the portal's CGI: `callback`, then `items`,
    /// then `_`; the answer read by `read` with the callback sent.
    private func call<Answer>(_ path: String, _ items: [(name: String, value: String)], tally: Tally,
                              read: @escaping ([UInt8], String) -> Result<Answer, SrunAnswer.Problem>,
                              completion: @escaping (SrunOutcome<Answer>, Tally) -> Void) {
        let milliseconds = Int64(WallClock.now() * 1000)
        let callback = SrunQuery.callback(milliseconds: milliseconds, random: UInt64.random(in: 0...UInt64.max))
        let query = SrunQuery.string([(name: "callback", value: callback)] + items + [(name: "_", value: String(milliseconds))])
        get(base + path + "?" + query, on: easy, tally: tally) { fetched, tally in
            if let failure = fetched.failure { return completion(.failed(failure), tally) }
            guard fetched.status == 200 else { return completion(.failed(.protocolError("the portal answered HTTP \(fetched.status)")), tally) }
            switch read(fetched.body, callback) {
            case .success(let answer): completion(.answered(answer), tally)
            case .failure(let problem): completion(.failed(.protocolError(problem.text)), tally)
            }
        }
    }

    /// One GET with `easy`, within the operation's deadline; `completion`
    /// runs on the loop, never before this returns. With
    /// `keepingPartialBody`, an answer past 64 KiB is its first 64 KiB.
    private func get(_ url: String, on easy: CurlEasy, tally: Tally, keepingPartialBody: Bool = false,
                     completion: @escaping (Fetched, Tally) -> Void) {
        let limit = min(configuration.requestTimeout, tally.deadline - loop.now)
        guard limit > .zero else { return later.run { completion(Fetched(failure: .timeout), tally) } }
        let response = ResponseBuffer(limit: SrunAnswer.sizeLimit)
        easy.clearError()
        do throws(ClientConfigurationError) {
            try easy.set(CURLOPT_URL, url, "the URL")
            try easy.set(CURLOPT_HTTPGET, 1, "GET")
            try easy.set(CURLOPT_TIMEOUT_MS, limit, "the request timeout")
            // Ownership: `response` is retained by the completion below until
            // the transfer is over, the only time curl writes to it.
            try easy.set(CURLOPT_WRITEDATA, pointer: Unmanaged.passUnretained(response).toOpaque(), "the answer buffer")
            try easy.set(CURLOPT_HEADERDATA, pointer: Unmanaged.passUnretained(response).toOpaque(), "the answer buffer")
        } catch {
            return later.run { completion(Fetched(failure: .protocolError(error.description)), tally) }
        }
        let multi = self.multi ?? CurlMulti(loop: loop)
        self.multi = multi
        let started = multi.start(easy) { [weak self] code in
            var tally = tally
            tally.requests += 1
            tally.status = response.headComplete ? response.status : easy.info(CURLINFO_RESPONSE_CODE)
            tally.opened += easy.info(CURLINFO_NUM_CONNECTS)
            var fetched = Fetched(status: tally.status, body: response.bytes, redirect: Self.redirect(easy))
            if code != CURLE_OK && !(keepingPartialBody && response.overflowed && response.headComplete) {
                fetched.failure = TransportFailure.classify(
                    code, osErrno: easy.info(CURLINFO_OS_ERRNO), bodyOverflowed: response.overflowed, detail: easy.failureText(code))
                // A broken exchange may leave the connection in any state: start afresh.
                if let self, easy === self.easy { self.replaceHandles() }
            }
            completion(fetched, tally)
        }
        if !started { later.run { completion(Fetched(failure: .protocolError("libcurl refused to start the transfer")), tally) } }
    }

    /// `CURLINFO_REDIRECT_URL`: where a 3xx answer's `Location` points, resolved.
    private static func redirect(_ easy: CurlEasy) -> String? {
        var text: UnsafeMutablePointer<CChar>?
        guard ccurl_getinfo_string(easy.handle, CURLINFO_REDIRECT_URL, &text) == CURLE_OK, let text else { return nil }
        return String(cString: text)
    }
}
