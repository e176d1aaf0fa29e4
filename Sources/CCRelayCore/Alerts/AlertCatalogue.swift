import CoreVocabulary

/// What an alert is about, with the facts its text needs.
public enum AlertSubject: Sendable, Hashable {
    /// The server ended the session; `message` is the server's own text, if any.
    case loggedOut(message: String?)
    /// No keep-alive accepted; the session ends in `remainingSeconds`.
    case keepAliveFailing(remainingSeconds: Int)
    /// The session ran out while the server could not be reached, and ccrelay wins it back by itself.
    case sessionLapsed
    case locationDenied(LocationDenial)
    case locationOff(LocationOff)
    case locationTooCoarse(LocationTooCoarse)
    /// The login was refused or cannot be made; `said`: the server's or portal's own words, when it gave some.
    case credentials(CredentialProblem, said: String? = nil)
    /// The portal ended the session `times` times within `minutes` minutes: another device (or the portal) keeps ending it.
    case sessionFought(times: Int, minutes: Int)
    /// Another device logged in to the account: its kind (`class_name`/`os_name`) and its address cut to its first parts.
    case newDevice(kind: String, address: String)
    /// The campus server's identity could not be verified; nothing was sent to it.
    case serverUntrusted(ServerTrustProblem)
    /// A campus notice: the server's plain text.
    case notice(id: String, title: String, body: String, urgency: Urgency)
    case backOnline
    /// A relay target refused a forwarded alert: `target` without secrets, `answer` what it said.
    case forwardRefused(target: String, answer: String)
    /// The configuration file exists but cannot be used: `problems`, each `file:line: message`.
    case configurationUnusable(problems: [String])
    /// The running configuration was changed into one that cannot be used; the daemon goes on with the one it had.
    case changedConfigurationUnusable(problems: [String])
    /// Logged in, but two checks in a row found no way out: `portal` when a
    /// page or redirect answered; `detail`, each endpoint's answer.
    case noOutsideAccess(portal: Bool)
    /// What the daemon is doing, shown when CC Relay is launched.
    case status(StatusSummary)

    /// The alert kind, and so the notification slot.
    public var kind: AlertKind {
        switch self {
        case .loggedOut, .sessionFought: .loggedOut
        case .keepAliveFailing, .sessionLapsed: .keepAliveFailing
        case .locationDenied: .locationDenied
        case .locationOff: .locationOff
        case .locationTooCoarse: .locationTooCoarse
        case .credentials: .credentials
        case .serverUntrusted: .serverUntrusted
        case .notice: .notice
        case .backOnline: .backOnline
        case .forwardRefused: .forwardRefused
        case .configurationUnusable, .changedConfigurationUnusable: .notSetUp
        case .noOutsideAccess: .noOutsideAccess
        case .newDevice: .newDevice
        case .status: .status
        }
    }
}

/// The facts of the status bubble.
public struct StatusSummary: Sendable, Hashable {
    public var state: DaemonState
    public var ip: String
    /// Seconds until the server logs the session out, when there is one.
    public var remaining: Int64?
    public var unread: Int
    /// What stands in the way (the last error, or the configuration problem).
    public var problem: String
    /// The problem's `ProblemCode` name: its sentence in the user's language stands in for the English `problem`.
    public var problemCode = ""
    /// Say the command that sets ccrelay up or changes its settings ("Set up…" found no terminal).
    public var setupCommand = false

    public init(state: DaemonState, ip: String, remaining: Int64?, unread: Int, problem: String) {
        self.state = state
        self.ip = ip
        self.remaining = remaining
        self.unread = unread
        self.problem = problem
    }
}

/// Why the server or the certificate stands in the way of logging in.
public enum CredentialProblem: Sendable, Hashable {
    case certificateRejected
    case certificateExpired
    case certificateExpiring(days: Int)
    case badPassword
    case accountDisabled
    case quotaExhausted
    case onlineElsewhere
    /// A Srun portal does not know the access controller (a wrong `[srun] ac-id`, or the portal's trouble).
    case portalMisconfigured
    /// A Srun portal asks for a picture captcha.
    case captchaRequired
    /// A Srun portal refused for a reason the user cannot fix here (a binding, a plan, the kind of client).
    case portalRefused
    /// The server refused the certificate in the TLS handshake.
    case refusedInHandshake(HandshakeRefusal)
    /// The certificate, key or CA file cannot be used; `detail` names the
    /// file and the fix (English, from the file check).
    case unusableFiles(detail: String)
    /// The certificate or key the configuration names cannot be used, found
    /// before any login (`detail`: file:line and the fix): the daemon waits
    /// for the files and starts the moment they are usable.
    case configuredFilesUnusable(detail: String)

    /// Announces trouble ahead while logging in still works.
    public var isWarning: Bool { if case .certificateExpiring = self { true } else { false } }
}

/// The texts and presentation of every alert. Strings are English message
/// ids; `localize` (gettext in the daemon) turns them into the user's language.
public enum AlertCatalogue {
    /// Makes the alert for `subject`, its text passed through `localize`.
    public static func alert(for subject: AlertSubject, localize: Localizer) -> Alert {
        let openAction = AlertAction(key: AlertAction.defaultKey, label: localize("Show status"))
        switch subject {
        case .loggedOut(let message):
            var body = localize("Your login was cancelled, please log in again.")
            if let message, !message.isEmpty { body += "\n" + message }
            return Alert(
                kind: .loggedOut, title: localize("Logged out of the campus network"), body: body,
                urgency: .critical,
                actions: [openAction, AlertAction(key: AlertAction.reloginKey, label: localize("Log in again"))],
                resident: true)
        case .keepAliveFailing(let remaining):
            return Alert(
                kind: .keepAliveFailing, title: localize("Keep-alive failed"),
                body: localize.plural(
                    "The campus server has not confirmed this computer. Outside access ends in %s second unless a keep-alive gets through.",
                    "The campus server has not confirmed this computer. Outside access ends in %s seconds unless a keep-alive gets through.",
                    count: max(remaining, 0)),
                urgency: .normal, actions: [openAction])
        case .sessionLapsed:
            return Alert(
                kind: .keepAliveFailing, title: localize("Keep-alive failed"),
                body: localize("The session ran out while the campus server could not be reached. ccrelay logs in again by itself as soon as it answers; you need not do anything."),
                urgency: .normal, actions: [openAction])
        case .locationDenied(let denial):
            let body =
                switch denial {
                case .byUser:
                    localize("The campus requires your location, but location access is denied for CC Relay. Allow it in Settings → Privacy → Location Services.")
                case .byConfiguration:
                    localize("The campus requires your location, but this computer's GeoClue configuration does not allow CC Relay. An administrator must add a section [io.github.ccrelay.CCRelay] with allowed=true, system=false and users= to /etc/geoclue/geoclue.conf.")
                case .noAgent:
                    localize("The campus requires your location, but no location agent is running to ask you for permission. Use a desktop that provides one (GNOME, KDE) or start /usr/libexec/geoclue-2.0/demos/agent.")
                }
            return Alert(
                kind: .locationDenied, title: localize("Location services denied"),
                body: body,
                urgency: .critical, actions: [openAction])
        case .locationOff(let off):
            let body =
                switch off {
                case .disabled: localize("The campus requires your location. Turn on Location Services in Settings → Privacy.")
                case .unavailable:
                    localize("The campus requires your location, but no location service is installed or running. Install GeoClue: sudo apt install geoclue-2.0")
                }
            return Alert(
                kind: .locationOff, title: localize("Location services are off"),
                body: body,
                urgency: .critical, actions: [openAction])
        case .locationTooCoarse(let problem):
            let body =
                switch problem {
                case .approximate:
                    localize("The campus needs your exact location, but CC Relay may only see an approximate one. Allow exact location in Settings → Privacy → Location Services.")
                case .stopped:
                    localize("The campus requires your location, but the location service stopped giving it to CC Relay. Check Settings → Privacy → Location Services.")
                }
            return Alert(
                kind: .locationTooCoarse, title: localize("Location services not set up correctly"),
                body: body,
                urgency: .normal, actions: [openAction])
        case .credentials(let problem, _) where problem.isWarning:
            // A warning while all still works, not a refusal: its own title.
            return Alert(
                kind: .credentials, title: localize("Student certificate expires soon"), body: credentialText(problem, localize),
                urgency: .critical, actions: [openAction])
        case .credentials(let problem, let said):
            // The server's own words too (证书已被吊销, E2553: Password is error.).
            let words = said.map { PrintableText.oneLine($0) }.flatMap { $0.isEmpty ? nil : TextTemplate.fill(localize("The server said: %s"), String($0.prefix(300))) }
            return Alert(
                kind: .credentials, title: localize("Campus login refused"),
                body: credentialText(problem, localize) + (words.map { "\n" + $0 } ?? ""),
                urgency: .critical, actions: [openAction])
        case .sessionFought(let times, let minutes):
            return Alert(
                kind: .loggedOut, title: localize("Logged out of the campus network"),
                body: TextTemplate.fill(
                    localize("The portal ended your session %s times in %s minutes: another device, or the portal, keeps ending it. ccrelay stopped logging in again; choose Log in again once the other device is off."),
                    "\(times)", "\(minutes)"),
                urgency: .critical,
                actions: [openAction, AlertAction(key: AlertAction.reloginKey, label: localize("Log in again"))],
                resident: true)
        case .newDevice(let kind, let address):
            return Alert(
                kind: .newDevice, title: localize("Another device logged in to your account"),
                body: TextTemplate.fill(localize("A device (%s) at %s logged in to your campus account while this one is online."), kind, address),
                urgency: .normal, actions: [openAction])
        case .serverUntrusted(let problem):
            return Alert(
                kind: .serverUntrusted, title: localize("Campus server not trusted"),
                body: TextTemplate.fill(
                    localize("The campus server's identity could not be verified (%s), so nothing was sent to it. This is usually a captive portal: log in to it in a browser. Otherwise check [server] ca-file and pinned-key in ccrelay.conf. ccrelay keeps trying."),
                    trustText(problem, localize)),
                urgency: .normal, actions: [openAction])
        case .notice(_, let title, let body, let urgency):
            return Alert(kind: .notice, title: title, body: body, urgency: urgency, actions: [openAction])
        case .forwardRefused(let target, let answer):
            return Alert(
                kind: .forwardRefused, title: localize("Alerts cannot be forwarded"),
                body: TextTemplate.fill(
                    localize("%s refuses the alerts ccrelay forwards (%s). Check its URL and token in [relay] in ccrelay.conf, then run: ccrelay relay test"),
                    target, answer),
                urgency: .normal, actions: [openAction])
        case .configurationUnusable(let problems):
            return Alert(
                kind: .notSetUp, title: localize("CC Relay cannot use its configuration"),
                body: TextTemplate.fill(
                    localize("%s\nFix it in the file, or run ccrelay setup --edit; ccrelay starts the moment the file is usable."),
                    problems.prefix(3).joined(separator: "\n")),
                urgency: .critical,
                actions: [openAction, AlertAction(key: AlertAction.setUpKey, label: localize("Set up…"))])
        case .changedConfigurationUnusable(let problems):
            return Alert(
                kind: .notSetUp, title: localize("The changed configuration cannot be used"),
                body: TextTemplate.fill(
                    localize("%s\nccrelay goes on with the configuration it had. Fix the file, or run ccrelay setup --edit."),
                    problems.prefix(3).joined(separator: "\n")),
                urgency: .normal,
                actions: [openAction, AlertAction(key: AlertAction.setUpKey, label: localize("Set up…"))])
        case .noOutsideAccess(let portal):
            let why =
                portal
                ? localize("A login page answers instead: open any web page in the browser and log in there.")
                : localize("The campus network is limiting traffic, or the way out is down.")
            return Alert(
                kind: .noOutsideAccess, title: localize("Logged in, but no outside access"),
                // What each endpoint answered is for ccrelay doctor and the timeline, not the bubble (issue 33.7).
                body: TextTemplate.fill(
                    localize("The campus server says you are online, but traffic does not get out. %s ccrelay keeps the session and checks again (details: ccrelay doctor)."),
                    why),
                urgency: .normal, actions: [openAction])
        case .status(let summary):
            return statusAlert(summary, localize: localize)
        case .backOnline:
            return Alert(
                kind: .backOnline, title: localize("Back online"),
                body: localize("The campus server accepted a keep-alive again."), urgency: .low, transient: true)
        }
    }

    private static func credentialText(_ problem: CredentialProblem, _ localize: Localizer) -> String {
        switch problem {
        case .certificateRejected:
            localize("The server rejected your student certificate. Check [auth] certificate in ccrelay.conf, or get a new certificate from campus IT.")
        case .certificateExpired:
            localize("Your student certificate has expired. Get a new one from campus IT and set it in ccrelay.conf.")
        case .certificateExpiring(let days):
            localize.plural(
                "Your student certificate expires in %s day. Renew it with campus IT before then.",
                "Your student certificate expires in %s days. Renew it with campus IT before then.", count: days)
        case .refusedInHandshake(.unknownAuthority):
            localize("The campus server does not accept certificates from your certificate's issuer. Check that [auth] certificate in ccrelay.conf is the one campus IT gave you.")
        case .refusedInHandshake(.expired):
            localize("The campus server says your student certificate has expired or is not valid yet. Check this computer's clock, or get a new certificate from campus IT.")
        case .refusedInHandshake(.revoked):
            localize("The campus server says your student certificate was revoked. Get a new one from campus IT.")
        case .refusedInHandshake(.required):
            localize("The campus server requires a student certificate. Set [auth] certificate in ccrelay.conf.")
        case .refusedInHandshake(.notAccepted):
            localize("The campus server refused your student certificate during the secure connection. Check [auth] certificate and key in ccrelay.conf, or get a new certificate from campus IT.")
        case .unusableFiles(let detail):
            TextTemplate.fill(localize("ccrelay cannot use your certificate files: %s. Fix it, then run: ccrelay login"), detail)
        case .configuredFilesUnusable(let detail):
            TextTemplate.fill(localize("ccrelay cannot use the certificate files its configuration names: %s. Fix them, or run ccrelay setup --edit; ccrelay logs in the moment they are usable."), detail)
        case .badPassword:
            localize("The server refused your user name or password. Save the right password with: ccrelay login --save-password")
        case .portalMisconfigured:
            localize("The portal does not know this access point: [srun] ac-id in ccrelay.conf is wrong (auto finds it from the portal's address), or the portal is in trouble.")
        case .captchaRequired:
            localize("The portal asks for a picture captcha: log in once in a browser, then ccrelay carries on.")
        case .portalRefused:
            localize("The portal refused the login for a reason ccrelay cannot fix (a binding, a plan, or this kind of client); ask campus IT.")
        case .accountDisabled:
            localize("Your campus network account is disabled. Contact campus IT.")
        case .quotaExhausted:
            localize("Your campus network quota is used up.")
        case .onlineElsewhere:
            localize("Your account is online on another device. Log out there, then log in again here.")
        }
    }

    private static func trustText(_ problem: ServerTrustProblem, _ localize: Localizer) -> String {
        switch problem {
        case .unknownIssuer: localize("its certificate is not from a trusted authority")
        case .expired: localize("its certificate has expired or is not valid yet")
        case .wrongName: localize("its certificate is for another name")
        case .pinMismatch: localize("its key does not match pinned-key")
        case .other: localize("its certificate could not be checked")
        }
    }

    /// The status bubble: the state in a sentence, the unread count, and
    /// actions whose labels say what they do (log in or out, clear the badge).
    static func statusAlert(_ summary: StatusSummary, localize: Localizer) -> Alert {
        var lines: [String] = []
        var actions: [AlertAction] = []
        switch summary.state {
        case .online:
            lines.append(TextTemplate.fill(localize("Online: outside access for %s."), summary.ip.isEmpty ? "?" : summary.ip))
            actions.append(AlertAction(key: AlertAction.logoutKey, label: localize("Log out")))
        case .failing:
            lines.append(TextTemplate.fill(localize("Keep-alives are failing; the session ends in %s s unless one gets through."),
                              "\(summary.remaining ?? 0)"))
            actions.append(AlertAction(key: AlertAction.logoutKey, label: localize("Log out")))
        case .loggingIn:
            lines.append(localize("Logging in…"))
        case .noNetwork:
            lines.append(localize("No network: waiting for it to come back."))
        case .sleeping:
            lines.append(localize("The computer is going to sleep."))
        case .unconfigured:
            lines.append(localize("Not set up yet: run ccrelay setup in a terminal, or choose Set up…"))
            actions.append(AlertAction(key: AlertAction.setUpKey, label: localize("Set up…")))
        case .loggedOut:
            lines.append(localize("Logged out of the campus network."))
            actions.append(AlertAction(key: AlertAction.loginKey, label: localize("Log in")))
        default:
            lines.append(localize("Not logged in."))
            actions.append(AlertAction(key: AlertAction.loginKey, label: localize("Log in")))
        }
        // Not set up, the line above says what to do; the problem's longer sentence (ccrelay status prints it)
        // said it again in the first bubble a new user sees (issue 33.7).
        if !summary.problem.isEmpty && summary.state != .online && summary.state != .unconfigured {
            lines.append(ProblemText.localized(summary.problem, code: summary.problemCode, localize: localize))
        }
        if summary.setupCommand {
            lines.append(summary.state == .unconfigured
                ? localize("No terminal could be opened: run ccrelay setup in one.")
                : localize("No terminal could be opened: to change the settings, run ccrelay setup --edit in one."))
        }
        if summary.unread > 0 {
            lines.append(localize.plural(
                "%s unread alert (ccrelay history lists it).", "%s unread alerts (ccrelay history lists them).", count: summary.unread))
            actions.append(AlertAction(key: AlertAction.clearBadgeKey, label: TextTemplate.fill(localize("Clear %s unread"), "\(summary.unread)")))
        }
        return Alert(kind: .status, title: "CC Relay", body: lines.joined(separator: "\n"), urgency: .low, actions: actions,
                     transient: true)
    }

    /// One example of every subject, for `ccrelay notify-test` and for
    /// checking that every text has a translation; the configuration's
    /// problem is the checker's own, in `localize`'s language.
    public static func examples(_ localize: Localizer) -> [AlertSubject] { [
        .loggedOut(message: nil),
        .keepAliveFailing(remainingSeconds: 45),
        .locationDenied(.byUser),
        .locationOff(.disabled),
        .locationTooCoarse(.approximate),
        .credentials(.certificateExpiring(days: 3)),
        .serverUntrusted(.unknownIssuer),
        .notice(id: "notify-test", title: "网络维护通知", body: "今晚 23:00–23:30 认证系统维护。", urgency: .normal),
        .backOnline,
        .forwardRefused(target: "ntfy https://ntfy.campus.example/ccrelay-20231234", answer: "HTTP 403: forbidden"),
        .configurationUnusable(problems: problems(of: "[server]\nurl = https://cc.campus.example/\n[keepalive]\nwarn-before = 2h\n", localize)),
        .noOutsideAccess(portal: true),
        .newDevice(kind: "Android", address: "10.20.x.x"),
        .status(StatusSummary(state: .online, ip: "10.20.30.40", remaining: 150, unread: 2, problem: "")),
    ] }

    /// The subjects beyond one example a kind (a kind with two texts), for checking every text has a translation.
    public static func moreExamples(_ localize: Localizer) -> [AlertSubject] { [
        .sessionFought(times: 3, minutes: 10), .sessionLapsed,
        .changedConfigurationUnusable(problems: problems(of: "[server]\nurl = https://cc.campus.example/\n[keepalive]\nauto-relogin = maybe\n", localize)),
        .credentials(.badPassword, said: "E2553: Password is error."),
    ] }

    /// What the configuration checker says of `text` in the user's file, as the not-set-up bubbles quote it.
    private static func problems(of text: String, _ localize: Localizer) -> [String] {
        ConfigurationParser.parse(text, file: "~/.config/ccrelay/ccrelay.conf", home: "~", localize: localize).errors.map(\.description)
    }

    /// Every credential problem, for checking that every text has a translation.
    public static let allCredentialProblems: [CredentialProblem] = [
        .certificateRejected, .certificateExpired, .certificateExpiring(days: 3), .badPassword, .accountDisabled,
        .quotaExhausted, .onlineElsewhere, .portalMisconfigured, .captchaRequired, .portalRefused, .unusableFiles(detail: "example"),
        .configuredFilesUnusable(detail: "example"),
    ] + HandshakeRefusal.allCases.map { .refusedInHandshake($0) }
}
