import CoreVocabulary
import Forwarding

/// `ccrelay.conf` as the daemon uses it (ccrelay.conf(5), packaging/ccrelay.conf.5).
public struct Configuration: Sendable, Hashable {
    /// How location fixes are handled (`[location] mode`).
    public enum LocationMode: String, Sendable, Hashable, CaseIterable {
        case off, auto, always
    }

    /// Where fixes come from (`[location] source`): `auto` is the Location
    /// portal inside Flatpak and GeoClue2 elsewhere.
    public enum LocationSource: String, Sendable, Hashable, CaseIterable {
        case auto, geoclue, portal
    }

    public var serverURL: String
    /// The campus network's login protocol (`[server] protocol`; CC/1 when not given).
    public var serverProtocol = ServerProtocol.cc1
    /// A Srun portal's settings (`[srun]`), used with `protocol = srun`.
    public var srun = SrunSettings()
    public var caFile: String?
    public var pinnedKey: String?
    public var interface: String?
    public var certificate: String?
    public var key: String?
    public var user: String?
    /// A file holding the campus password, for a machine without a keyring
    /// (the system service): 0600, or 0640 root:ccrelay; never logged.
    public var passwordFile: String?
    public var warnBefore: Int = 60
    public var autoRelogin = true
    public var logoutOnExit = false
    public var locationMode: LocationMode = .auto
    public var locationSource: LocationSource = .auto
    public var notices = true
    /// Outside access is checked (`[probe] mode = auto`), against these plain-HTTP endpoints (`[probe] urls`).
    public var probeEnabled = true
    public var probeURLs: [String] = Configuration.defaultProbeURLs
    /// Domestic `generate_204` endpoints (a probe hosted abroad says "offline" on a Chinese campus).
    public static let defaultProbeURLs = [
        "http://connect.rom.miui.com/generate_204", "http://connectivitycheck.platform.hicloud.com/generate_204",
        "http://wifi.vivo.com.cn/generate_204",
    ]
    /// Where alerts are forwarded (`[relay]`); none by default.
    public var forwardTargets: [ForwardTarget] = []
    /// Which alerts are forwarded (`[relay] kinds`).
    public var forwardSelection: ForwardSelection = .standard
    /// Quiet hours for bubbles and forwarding (`[alerts] quiet`), and whether a logout keeps quiet too (`quiet-critical`).
    public var quietHours: QuietHours?
    public var quietCritical = false
    /// The quiet hours' one rule, for bubbles and targets alike (nil: none configured).
    public var quiet: QuietRule? { quietHours.map { QuietRule(hours: $0, critical: quietCritical) } }
    /// The CA bundle for relay targets with a campus CA (`[relay] ca-file`); the system's by default.
    public var forwardCAFile: String?
    /// Where the metrics go for the node exporter's textfile collector (`[metrics] textfile`); nil: nowhere.
    public var metricsTextfile: String?
    /// The password of a PKCS#12 `[auth] certificate`: never in the file,
    /// it comes from the keyring (`ccrelay setup` stores it); never logged.
    public var bundlePassword: String?
    /// Whether `certificate` names a PKCS#12 bundle (by its `.p12`/`.pfx` name):
    /// it holds its key, and its password may be in the keyring.
    public static func isPKCS12Bundle(_ certificate: String) -> Bool {
        let lower = certificate.lowercased()
        return lower.hasSuffix(".p12") || lower.hasSuffix(".pfx")
    }

    /// The line each key was set on (`group.key`, such as `auth.key`), so
    /// that later checks of the value can name it.
    public var lines: [String: Int] = [:]
}

/// A problem in the configuration file, located by line.
public struct ConfigurationIssue: Sendable, Hashable, CustomStringConvertible {
    public var file: String
    /// 1-based; 0 when the problem is the file as a whole.
    public var line: Int
    public var message: String
    /// The key at fault (`group.key`, such as `auth.key`), when one is.
    public var key: String?
    public init(file: String, line: Int, message: String, key: String? = nil) {
        self.file = file
        self.line = line
        self.message = message
        self.key = key
    }

    /// Whether the problem is with the certificate or key file it names (the `credentials` alert's).
    public var isAboutCredentialFiles: Bool { key == "auth.certificate" || key == "auth.key" }
    public var description: String { line > 0 ? "\(file):\(line): \(message)" : "\(file): \(message)" }
}

/// Reads the keyfile syntax of `ccrelay.conf`: `[group]` headers, `key = value`
/// lines, comments starting with `#` or `;` (also after a value, behind a
/// space). Unknown keys are warnings; a bad value is an error naming file:line.
public enum ConfigurationParser {
    public struct Result: Sendable {
        /// Nil when there are errors.
        public var configuration: Configuration?
        public var errors: [ConfigurationIssue]
        public var warnings: [ConfigurationIssue]
        public init(configuration: Configuration?, errors: [ConfigurationIssue], warnings: [ConfigurationIssue]) {
            self.configuration = configuration
            self.errors = errors
            self.warnings = warnings
        }
    }

    /// Parses `text` (the contents of `file`); `home` expands a leading `~/` in paths. The
    /// problems are said in `localize`'s language (the shell's: the user's; tests: `.english`).
    public static func parse(_ text: String, file: String, home: String, localize: Localizer) -> Result {
        var errors: [ConfigurationIssue] = []
        var warnings: [ConfigurationIssue] = []
        var configuration = Configuration(serverURL: "")
        var group: String?
        var seen: [String: Int] = [:]
        func error(_ line: Int, _ message: String) { errors.append(.init(file: file, line: line, message: message)) }
        func warn(_ line: Int, _ message: String) { warnings.append(.init(file: file, line: line, message: message)) }

        // A UTF-8 byte-order mark and CRLF line ends (files from Windows
        // editors) just work. Lines are split on scalars: "\r\n" is one
        // Character in Swift, so splitting Characters on "\n" would not split it.
        var scalars = Substring(text).unicodeScalars
        if scalars.first == "\u{FEFF}" { scalars = scalars.dropFirst() }
        for (index, rawScalars) in scalars.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            var lineScalars = rawScalars
            if lineScalars.last == "\r" { lineScalars = lineScalars.dropLast() }
            if lineScalars.contains(where: { $0.value < 0x20 && $0 != "\t" || $0.value == 0x7F }) {
                error(number, localize("the line holds a control character (a NUL byte?); remove it"))
                continue
            }
            let line = stripComment(Substring(lineScalars)).trimmed
            if line.isEmpty { continue }
            if line.hasPrefix("[") {
                guard line.hasSuffix("]") else {
                    error(number, localize("a group header must look like [server]"))
                    continue
                }
                let name = String(line.dropFirst().dropLast()).trimmed
                group = name
                if !knownKeys.keys.contains(name) {
                    warn(number, TextTemplate.fill(localize("unknown group [%s] is ignored (known: %s)"), name, localize.list(knownKeys.keys.sorted())))
                }
                continue
            }
            guard let equals = line.firstIndex(of: "=") else {
                // A URL in the line may carry a secret (a token, user:password@): shown without it.
                let shown = line.contains("://") || group == "relay" || group == "auth" ? TargetURL.redacted(line, localize: localize) : line
                error(number, TextTemplate.fill(localize("expected 'key = value', got '%s'"), shown))
                continue
            }
            let key = String(line[..<equals]).trimmed
            let value = String(line[line.index(after: equals)...]).trimmed
            guard let group else {
                error(number, TextTemplate.fill(
                    localize("'%s' comes before any group; put it under [server], [auth], [keepalive], [location], [notifications] or [relay]"), key))
                continue
            }
            guard let keys = knownKeys[group] else { continue }
            guard keys.contains(key) else {
                let shownKey = key.contains("://") ? TargetURL.redacted(key, localize: localize) : key
                var message = group == "relay"
                    ? TextTemplate.fill(localize("unknown target type '%s' in [relay] is ignored (known: %s)"), shownKey, localize.list(keys))
                    : TextTemplate.fill(localize("unknown key '%s' in [%s] is ignored"), shownKey, group)
                if let near = keys.min(by: { editDistance($0, key) < editDistance($1, key) }), editDistance(near, key) <= 2 {
                    message += TextTemplate.fill(localize("; did you mean '%s'?"), near)
                }
                warn(number, message)
                continue
            }
            // Any number of relay targets, one per line.
            let repeatable = group == "relay" && (key == "forward" || PushServices.configurationKeys.contains(key))
            if !repeatable, let previous = seen["\(group).\(key)"] {
                warn(number, TextTemplate.fill(localize("'%s' is set again (first on line %s); this value wins"), key, String(previous)))
            }
            seen["\(group).\(key)"] = number
            if let problem = apply(group, key, value, to: &configuration, home: home, localize: localize) { error(number, problem) }
        }
        if seen["server.url"] == nil { errors.append(.init(file: file, line: 0, message: localize("[server] url is required"))) }
        checkProtocol(&configuration, seen: seen, localize: localize, error: error, warn: warn)
        if configuration.key != nil && configuration.certificate == nil {
            errors.append(.init(file: file, line: seen["auth.key"] ?? 0, message: localize("[auth] key needs [auth] certificate")))
        }
        if configuration.certificate == nil && configuration.user == nil && seen["server.url"] != nil && configuration.serverProtocol == .cc1 {
            warnings.append(.init(file: file, line: 0,
                                  message: localize("neither [auth] certificate nor [auth] user is set; the server must accept anonymous logins")))
        }
        configuration.lines = seen
        return Result(configuration: errors.isEmpty ? configuration : nil, errors: errors, warnings: warnings)
    }

    /// The key table: every group and its keys. ccrelay.conf(5) documents each
    /// (ManPageReferenceTests keeps the two equal), as does the shipped example.
    static let knownKeys: [String: [String]] = [
        "server": ["url", "protocol", "ca-file", "pinned-key", "interface"],
        "auth": ["certificate", "key", "user", "password-file"],
        "keepalive": ["warn-before", "auto-relogin", "logout-on-exit"],
        "location": ["mode", "source"],
        "notifications": ["notices"],
        "relay": PushServices.configurationKeys + ["forward", "kinds", "ca-file"],
        "probe": ["mode", "urls"],
        "alerts": ["quiet", "quiet-critical"],
        "metrics": ["textfile"],
        "srun": SrunSettings.keys,
    ]

    /// Applies one value; returns the problem with it, if any.
    private static func apply(_ group: String, _ key: String, _ value: String, to c: inout Configuration, home: String,
                              localize: Localizer) -> String?
    {
        func path() -> String? {
            if value.hasPrefix("~/") { return home + value.dropFirst(1) }
            return value.hasPrefix("/") ? value : nil
        }
        func notAPath() -> String { TextTemplate.fill(localize("%s must be an absolute path or start with ~/, got '%s'"), key, value) }
        func notAFlag() -> String { TextTemplate.fill(localize("%s must be true or false, got '%s'"), key, value) }
        func bool() -> Bool? {
            switch value.lowercased() {
            case "true", "yes", "1", "on": true
            case "false", "no", "0", "off": false
            default: nil
            }
        }
        switch (group, key) {
        case ("server", "url"):
            guard value.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }) else {
                return localize("url must not contain spaces, tabs or control characters")
            }
            // Plain http to any address is a Srun portal's way (checked once the protocol is known: checkProtocol).
            let asHTTPS = value.lowercased().hasPrefix("http://") ? "https://" + value.dropFirst("http://".count) : value
            guard let url = TargetURL(asHTTPS) else {
                return TextTemplate.fill(
                    localize("url must be https://HOST[:PORT]/ with a port from 1 to 65535 (plain http only to a loopback address: 127.0.0.1, [::1] or localhost, or a Srun portal), got '%s'"),
                    TargetURL.redacted(value, localize: localize))
            }
            guard !url.authority.contains("@") else {
                return localize("url must not hold a user name or password (user:password@); a password login takes [auth] user and the keyring (ccrelay login --save-password)")
            }
            c.serverURL = value
        case ("server", "protocol"):
            guard let chosen = ServerProtocol(rawValue: value) else { return TextTemplate.fill(localize("protocol must be cc1 or srun, got '%s'"), value) }
            c.serverProtocol = chosen
        case ("srun", _):
            return c.srun.apply(key, value, flag: bool(), localize: localize)
        case ("server", "ca-file"):
            guard let p = path() else { return notAPath() }
            c.caFile = p
        case ("server", "pinned-key"):
            let digest = value.dropFirst("sha256//".count)
            guard value.hasPrefix("sha256//"), digest.count == 44, digest.hasSuffix("="),
                digest.allSatisfy({ $0.isLetter || $0.isNumber || "+/=".contains($0) })
            else {
                return localize("pinned-key must be sha256// followed by the base64 SHA-256 of the server's public key (44 characters)")
            }
            c.pinnedKey = value
        case ("server", "interface"):
            guard !value.isEmpty, value.count < 16, !value.contains("/"), !value.contains(" ") else {
                return TextTemplate.fill(localize("interface must be a network interface name such as wlan0, got '%s'"), value)
            }
            c.interface = value
        case ("auth", "certificate"):
            guard let p = path() else { return notAPath() }
            c.certificate = p
        case ("auth", "key"):
            guard let p = path() else { return notAPath() }
            c.key = p
        case ("auth", "user"):
            guard !value.isEmpty, !value.contains(" ") else { return localize("user must be your account name without spaces") }
            c.user = value
        case ("auth", "password-file"):
            guard let p = path() else { return notAPath() }
            c.passwordFile = p
        case ("keepalive", "warn-before"):
            guard let seconds = Int(value), (1...3600).contains(seconds) else {
                return TextTemplate.fill(localize("warn-before must be a number of seconds from 1 to 3600, got '%s'"), value)
            }
            c.warnBefore = seconds
        case ("keepalive", "auto-relogin"), ("keepalive", "logout-on-exit"), ("notifications", "notices"):
            guard let flag = bool() else { return notAFlag() }
            switch key {
            case "auto-relogin": c.autoRelogin = flag
            case "logout-on-exit": c.logoutOnExit = flag
            default: c.notices = flag
            }
        case ("location", "mode"):
            guard let mode = Configuration.LocationMode(rawValue: value) else {
                return TextTemplate.fill(localize("mode must be off, auto or always, got '%s'"), value)
            }
            c.locationMode = mode
        case ("relay", "kinds"):
            switch ForwardSelection.parse(value) {
            case .success(let selection): c.forwardSelection = selection
            case .failure(let problem): return problem.sentence(localize)
            }
        case ("relay", "ca-file"):
            guard let p = path() else { return notAPath() }
            c.forwardCAFile = p
        case ("relay", _):
            do throws(ForwardTargetProblem) {
                let target: ForwardTarget
                if key == "forward" {
                    target = try ForwardTarget(forward: value)
                } else {
                    guard PushServices.configurationKeys.contains(key) else { break }
                    target = try ForwardTarget(key: key, url: value)
                }
                if c.forwardTargets.contains(where: { $0.name == target.name }) {
                    return TextTemplate.fill(
                        localize("this %s target is already listed (the same server and path or key; its alerts would share one queue)"),
                        target.service.name)
                }
                guard c.forwardTargets.count < 16 else { return localize("at most 16 relay targets") }
                c.forwardTargets.append(target)
            } catch {
                return error.sentence(localize)
            }
        case ("alerts", "quiet"):
            guard let quiet = QuietHours(value) else {
                return TextTemplate.fill(
                    localize("quiet must be local times HH:MM-HH:MM, several separated by commas (at most 8), such as 23:20-06:20, got '%s'"), value)
            }
            c.quietHours = quiet
        case ("alerts", "quiet-critical"):
            guard let on = bool() else { return notAFlag() }
            c.quietCritical = on
        case ("probe", "mode"):
            switch value {
            case "auto": c.probeEnabled = true
            case "off": c.probeEnabled = false
            default: return TextTemplate.fill(localize("mode must be auto or off, got '%s'"), value)
            }
        case ("probe", "urls"):
            let urls = value.split(separator: ",").map { String($0.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()) }
            guard (1...3).contains(urls.count) else { return localize("urls must be one to three URLs separated by commas") }
            for url in urls {
                guard url.hasPrefix("http://"), url.utf8.count <= 512, url.count > "http://".count,
                    url.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F })
                else {
                    return TextTemplate.fill(
                        localize("urls must be plain http:// addresses (a probe answers 204 without TLS), at most 512 characters, got '%s'"), url)
                }
            }
            c.probeURLs = urls
        case ("metrics", "textfile"):
            let made = path() ?? value
            if let problem = MetricsTextfile.problem(made, localize: localize) { return problem }
            c.metricsTextfile = made
        case ("location", "source"):
            guard let source = Configuration.LocationSource(rawValue: value) else {
                return TextTemplate.fill(localize("source must be auto, geoclue or portal, got '%s'"), value)
            }
            c.locationSource = source
        default:
            break
        }
        return nil
    }

    /// The rules that depend on the protocol, once the whole file is read:
    /// CC/1 takes plain http only to a loopback address; a Srun portal on any
    /// (with a warning: its protocol shows the password to anyone on the
    /// campus network), a user (the password comes from the keyring, a file
    /// or a credential) and no certificate.
    private static func checkProtocol(_ c: inout Configuration, seen: [String: Int], localize: Localizer, error: (Int, String) -> Void,
                                      warn: (Int, String) -> Void) {
        let urlLine = seen["server.url"] ?? 0
        let plain = c.serverURL.lowercased().hasPrefix("http://")
        switch c.serverProtocol {
        case .cc1:
            if plain, TargetURL(c.serverURL) == nil {
                error(urlLine, TextTemplate.fill(
                    localize("url must be https://HOST[:PORT]/ (plain http only to a loopback address: 127.0.0.1, [::1] or localhost, or a Srun portal with protocol = srun), got '%s'"),
                    TargetURL.redacted(c.serverURL, localize: localize)))
            }
            if let line = seen.first(where: { $0.key.hasPrefix("srun.") })?.value {
                warn(line, localize("[srun] is used only with [server] protocol = srun; it is ignored"))
            }
        case .srun:
            if plain {
                warn(urlLine, localize("the portal is plain http: its login protocol lets anyone on the campus network read the password (its encoding is undone with the challenge); use https:// where the school offers it"))
            }
            if c.user == nil {
                error(seen["server.protocol"] ?? 0,
                      localize("a Srun portal logs in with [auth] user (and its password in the keyring, [auth] password-file or a systemd credential)"))
            }
            for key in ["auth.certificate", "auth.key"] where seen[key] != nil {
                error(seen[key] ?? 0, TextTemplate.fill(
                    localize("a Srun portal logs in with a user and password, not a certificate: remove [auth] %s"), String(key.dropFirst(5))))
            }
        }
    }

    /// Drops a comment: a line starting with # or ;, or one behind whitespace.
    static func stripComment(_ line: Substring) -> Substring {
        let trimmed = line.drop { $0 == " " || $0 == "\t" }
        if trimmed.hasPrefix("#") || trimmed.hasPrefix(";") { return "" }
        var previous: Character = "x"
        for index in line.indices {
            let character = line[index]
            if (character == ";" || character == "#") && (previous == " " || previous == "\t") {
                return line[..<index]
            }
            previous = character
        }
        return line
    }
}
