import DBus
import DBusAsync
import DesktopServices
import DispatchLoop
import EventLoop
import FileAccess
import CCRelayCore
import Forwarding
#if canImport(Glibc)
import Glibc
#endif

/// `ccrelay setup`: from nothing to online in one command. Asks what it was
/// not told (on a terminal, the current answers as defaults), tries the
/// login once (and logs out) before it writes anything, then writes the
/// configuration 0600 with absolute paths and starts ccrelay at login.
enum SetupCommand {
    static let usage = localize("""
        Usage: ccrelay setup [--protocol cc1|srun] [--server URL] [--certificate FILE] [--key FILE]
                             [--ca-file FILE] [--pinned-key PIN] [--interface IF]
                             [--user ID --password-stdin] [--p12-password-stdin]
                             [--ac-id N|auto] [--domain SUFFIX] [--hmd5 hmac|hmac-empty|md5]
                             [--discover-from URL] [--ntfy URL] [--gotify URL] [--webhook URL]
                             [--forward URL] [--forward-ca-file FILE]
                             [--yes] [--edit] [--force] [--no-autostart] [--config PATH]

        Sets ccrelay up: the campus server, your student certificate (a PEM
        certificate and key, or a PKCS#12 bundle, whose password goes to the
        keyring), and what else the campus needs — or a Srun (深澜) portal, your
        user name and password (kept in the keyring). On a terminal it first
        looks at what the network puts in front of an anonymous request (a GET
        of the outside probe's plain-http URLs) and offers the Srun portal it
        finds, with its address and ac_id, as the answer. On a terminal it
        asks for what the options do not give, showing the current answers as
        defaults; with the options it asks nothing. Before writing anything it
        logs in once with the answers (and logs out again) and says what the server
        answered; only then does it write the configuration (mode 0600, absolute
        paths) and start ccrelay at login (systemctl --user enable --now ccrelay;
        the desktop's autostart entry covers desktops without it). A file that
        does not exist is asked for again; certificate files from elsewhere
        (Downloads) can be copied next to the configuration, readable only by you.

        Options:
          --protocol P         cc1 (a CC server) or srun (a Srun portal); by default
                               what the network shows, else the current answer, else cc1
          --server URL         the CC server (https://, or http:// to this computer),
                               or the Srun portal (http://10.0.0.55/, https://…)
          --certificate FILE   your student certificate (PEM, or PKCS#12: .p12/.pfx)
          --key FILE           its private key (PEM, chmod 600)
          --ca-file FILE       the campus CA, when the server's is not in the system's
          --pinned-key PIN     the server's public key pin (sha256//…)
          --interface IF       send through this network interface only
          --user ID            log in with a user name and password (kept in the keyring);
                               at a Srun portal the student ID without the domain suffix
          --password-stdin     read that password from standard input
          --ac-id N|auto       the Srun portal's ac_id (the digits after ac_id= in its
                               address); auto finds it from the portal at each start
          --domain SUFFIX      what the Srun portal's list adds to the user (@cmcc)
          --hmd5 VARIANT       how the Srun login's password field is made: hmac (the
                               portal's own page), hmac-empty (BIT), md5 (Tsinghua)
          --discover-from URL  look for the portal with an anonymous GET of this plain
                               http:// URL (instead of the outside probe's URLs)
          --ntfy URL           also forward alerts to this ntfy topic (server and topic)
          --gotify URL         … to this gotify application (…/message?token=APP_TOKEN)
          --webhook URL        … to this webhook (a JSON POST)
          --forward URL        … to this push service: bark://KEY, schan://SENDKEY,
                               pushplus://TOKEN, wecombot://KEY, dingtalk://TOKEN,
                               feishu://HOOK_ID, tgram://BOT_TOKEN/CHAT_ID (see man
                               ccrelay.conf); targets already in the configuration
                               are kept, and each gets a test message. On a machine
                               set up already, these options alone add the target to
                               the configuration as it is, with no trial login (a
                               session online stays online)
          --forward-ca-file FILE  the CA of a forwarding target on the campus (a Bark
                               server with the school's own certificate): [relay] ca-file
          --p12-password-stdin  read the PKCS#12 bundle's password from standard input
                                (its first line; the campus password, if any, follows);
                                it is kept in the keyring, never in a file
          --yes                ask nothing: take the options and the current answers
          --edit               change the existing configuration (its answers are the
                               defaults, even when some lines are wrong; a misspelt key
                               is corrected, or removed when the right one is set too;
                               every other line of it, unknown keys too, is kept)
          --force              replace an existing configuration (as --edit)
          --no-autostart       do not start ccrelay at login
          --config PATH        write this file instead of $XDG_CONFIG_HOME/ccrelay/ccrelay.conf
          -h, --help           show this help

        With ccrelay --system (as root) it sets up the system service instead, for a
        machine without a desktop: /etc/ccrelay/ccrelay.conf (--system=NAME:
        NAME.conf), the certificate and key copied beside it, a password in a file
        there (no keyring) — all root:ccrelay, mode 0640, so that the service reads
        them and nobody else does; it asks for a push service to forward alerts to
        (the same as --forward takes), then enables and starts the unit and prints
        the command that shows its state. A path with ~ is in the home of the user
        who ran sudo.

        A Srun portal's password travels in the portal's reversible encoding:
        on a plain http:// portal anyone on the campus network can read it; use
        https:// where the school offers it.

        Exit status: 0 when the login worked and the configuration is written,
        1 when it did not (nothing is written), 2 on a usage error.
        """)

    static let command = Subcommand(
        name: "setup", summary: localize("set ccrelay up: server, certificate, a test login, start at login"), usage: usage,
        flags: ["password-stdin", "yes", "edit", "force", "no-autostart", "p12-password-stdin"],
        valued: ["server", "certificate", "key", "ca-file", "pinned-key", "interface", "user", "config", "ntfy", "gotify", "webhook", "forward", "forward-ca-file",
                 "protocol", "ac-id", "domain", "hmd5", "discover-from"],
        values: ["certificate": Subcommand.fileValue, "key": Subcommand.fileValue, "ca-file": Subcommand.fileValue, "forward-ca-file": Subcommand.fileValue,
                 "config": Subcommand.fileValue, "protocol": ServerProtocol.allCases.map(\.rawValue),
                 "hmd5": SrunSettings.Digest.allCases.map(\.rawValue)],
        run: run)

    static func run(_ parsed: ParsedArguments) async -> Int32 {
        guard parsed.positionals.isEmpty else { return usageError("setup", fill(localize("unexpected argument '%s'"), parsed.positionals[0])) }
        if parsed.has("password-stdin") && parsed.values["user"] == nil { return usageError("setup", localize("--password-stdin goes with --user")) }
        // The system service (ccrelay --system setup, as root): /etc/ccrelay, the user and group ccrelay.
        var account: (user: uid_t, group: gid_t)?
        if CLI.systemService {
            guard let found = SystemSetup.serviceAccount() else { return ExitStatus.failure }
            account = found
        }
        let path = parsed.values["config"]
            ?? (CLI.systemService ? SystemService.configurationPath(instance: CLI.instance) : ConfigurationFile.defaultPath())
        // Forwarding alone on a machine set up already: no trial login while a daemon may be online.
        if SetupForward.applies(parsed, path: path) { return await SetupForward.run(parsed, path: path, account: account) }
        if access(path, F_OK) == 0 && !parsed.has("force") && !parsed.has("edit") {
            Output.error(fill(localize("setup: %s exists; to change it: ccrelay setup --edit (its answers are the defaults then)"), path))
            return ExitStatus.failure
        }
        // What runs now is what setup's last line speaks of (a daemon activated earlier reads the new file by itself).
        let daemonRan = account == nil ? await SetupDaemon.runs() : false
        var existing = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        if parsed.has("edit") || parsed.has("force") { existing = SetupEdit.mended(existing, file: path) }
        var current = existingAnswers(existing, file: path)
        let asking = isatty(0) != 0 && !parsed.has("yes") && !parsed.has("password-stdin") && !parsed.has("p12-password-stdin")
        // The login protocol, with what the network shows offered first.
        let probeURLs = ConfigurationFile.load(path).configuration?.probeURLs ?? Configuration.defaultProbeURLs
        let chosen: ServerProtocol
        switch SetupPortal.choose(parsed, current: &current, asking: asking, probeURLs: probeURLs) {
        case .success(let protocolChosen): chosen = protocolChosen
        case .failure(let problem): return usageError("setup", problem.message)
        }
        let portal = chosen == .srun
        /// The answer to one question: the option's value, else what is typed (the current answer
        /// when nothing is); a file that cannot be used is said at once and asked for again.
        func answer(_ key: String, _ question: String, required: Bool, file: Bool = false) -> Answer {
            if let given = parsed.values[key] {
                // A value the file cannot hold is refused as a usage error below, before any file is looked at.
                if file, ConfigurationEditor.problem(with: given, localize: Localization.localizer) == nil,
                    let problem = fileProblem(absolute(given))
                {
                    return .refused("--\(key) \(withFullPath(given)): \(problem)")
                }
                return .value(given)
            }
            let fallback = current[key]
            guard asking else { return fallback.map { .value($0) } ?? .none }
            let shown = fallback.map { " [\($0)]" } ?? (required ? "" : " " + localize("(none)"))
            while true {
                Output.prompt(question + shown + ": ")
                guard let line = readLine(strippingNewline: true) else { return fallback.map { .value($0) } ?? .none }
                let typed = String(line.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
                guard !typed.isEmpty else { return fallback.map { .value($0) } ?? .none }
                if file, let problem = fileProblem(absolute(typed)) {
                    Output.error(fill(localize("  %s: %s; type the path again (Ctrl-C stops setup)"), withFullPath(typed), problem))
                    continue
                }
                return .value(typed)
            }
        }
        let server: String
        let serverQuestion = portal ? localize("Srun portal URL (for example http://10.0.0.55/)") : localize("CC server URL (for example https://cc.example.edu.cn/)")
        switch answer("server", serverQuestion, required: true) {
        case .value(let given) where !given.isEmpty: server = given
        case .refused(let problem): return usageError("setup", problem)
        default: return usageError("setup", portal ? localize("the portal is needed: --server URL (or --discover-from URL)") : localize("the server is needed: --server URL"))
        }
        // A Srun portal's access controller and domain, right after its address.
        var srun: SetupPortal.SrunAnswers?
        if portal {
            if server.lowercased().hasPrefix("http://") {
                Output.out(localize("Note: this portal is plain http: its login protocol lets anyone on the campus network read the password; use https:// where the school offers it."))
            }
            switch SetupPortal.srunAnswers(parsed, current: current, asking: asking) {
            case .success(let answers): srun = answers
            case .failure(let problem): return usageError("setup", problem.message)
            }
        }
        var user: String?
        var certificate: String?
        var key: String?
        var caFile: String?
        let userQuestion = portal ? localize("User name at the portal (the student ID, without the domain suffix)") : localize("User name for a password login")
        for (name, question, file) in [("user", userQuestion, false),
                                        ("certificate", localize("Student certificate (PEM file, or a .p12/.pfx bundle)"), true)] where !(portal && file) {
            switch answer(name, question, required: name == "certificate" && user == nil || portal, file: file) {
            case .value(let given): if name == "user" { user = given } else { certificate = given }
            case .refused(let problem): return fileRefused(problem)
            case .none: break
            }
        }
        let bundle = certificate.map { Configuration.isPKCS12Bundle($0) } ?? false
        if bundle && account != nil {
            return fileRefused(localize("the system service takes a PKCS#12 bundle's password as the systemd credential p12-password, which setup does not write; give it a PEM certificate and key (openssl pkcs12 -in FILE.p12 -nodes -out student.pem)"))
        }
        // A PKCS#12 bundle holds its key; its password (empty for none) goes to the keyring.
        if certificate != nil && !bundle {
            switch answer("key", localize("Its private key (PEM file)"), required: true, file: true) {
            case .value(let given): key = given
            case .refused(let problem): return fileRefused(problem)
            case .none: break
            }
        }
        var bundlePassword: String?
        if parsed.has("p12-password-stdin") {
            guard bundle else { return usageError("setup", localize("--p12-password-stdin goes with a PKCS#12 --certificate (.p12 or .pfx)")) }
            switch SecretInput.readLine() {
            case .text(let text): bundlePassword = text
            case .none: bundlePassword = ""
            case .tooLong: return passwordTooLong()
            }
        } else if bundle && asking {
            bundlePassword = LoginCommand.askWithoutEcho(localize("Password of the certificate bundle (empty if it has none): "))
        }
        // A plain-http portal has no certificate to check.
        if !portal || !server.lowercased().hasPrefix("http://") || parsed.values["ca-file"] != nil {
            switch answer("ca-file", localize("Campus CA file"), required: false, file: true) {
            case .value(let given): caFile = given
            case .refused(let problem): return fileRefused(problem)
            case .none: break
            }
        }
        var relayCAFile = parsed.values["forward-ca-file"]
        if let given = relayCAFile, ConfigurationEditor.problem(with: given, localize: Localization.localizer) == nil,
            let problem = fileProblem(absolute(given))
        {
            return fileRefused("--forward-ca-file \(withFullPath(given)): \(problem)")
        }
        let folder = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        // The system service cannot read a home: copies of its files are staged (as root, following no link,
        // each checked to be what it claims), tried, and placed in its own folder only when the login worked.
        var staging: SystemSetup.Staging?
        if let account {
            guard SystemSetup.makeFolder(folder, group: account.group), let made = SystemSetup.Staging(in: folder) else {
                SetupCleanup.removeAll()
                return ExitStatus.failure
            }
            staging = made
            for (file, kind, name) in [(certificate, SystemSetup.FileKind.certificate, nil), (key, .key, nil), (caFile, .caFile, nil),
                                       (relayCAFile, .caFile, "relay-ca.pem")] {
                guard let file else { continue }
                guard let copy = made.stage(absolute(file), as: kind, name: name) else {
                    made.discard()
                    SetupCleanup.removeAll()
                    return ExitStatus.failure
                }
                switch kind {
                case .certificate: certificate = copy
                case .key: key = copy
                case .caFile where name == nil: caFile = copy
                case .caFile: relayCAFile = copy
                }
            }
        } else if asking {
            // Certificate files from elsewhere (a download) may move in beside the configuration, readable only by you.
            certificate = certificate.map { offerCopy($0, into: folder) }
            key = key.map { offerCopy($0, into: folder) }
            caFile = caFile.map { offerCopy($0, into: folder) }
        }
        guard user != nil || certificate != nil && !portal else {
            return usageError("setup", portal ? localize("a Srun portal logs in with a user: --user ID (and its password)")
                : localize("a certificate (--certificate) or a user (--user) is needed"))
        }
        var password: String?
        if let user {
            if parsed.has("password-stdin") {
                switch SecretInput.readLine() {
                case .text(let text): password = text
                case .none: password = nil
                case .tooLong: return passwordTooLong()
                }
            } else {
                password = LoginCommand.askWithoutEcho(fill(localize("Campus password for %s: "), user))
            }
            guard password != nil else {
                Output.error(localize("setup: no password came (standard input was empty or closed); nothing was written. Give it on standard input with --password-stdin, or leave that out to be asked"))
                return ExitStatus.failure
            }
        }

        // A box without a desktop hears of a logout only through forwarding: ask for a target.
        var relay = (PushServices.configurationKeys + ["forward"]).compactMap { key in parsed.values[key].map { (key, $0) } }
        if account != nil && asking && relay.isEmpty && current["relay"] == nil, let target = SystemSetup.askForwarding() {
            relay.append(target)
        }
        // Every value is checked before it is written: a line break in one would start new keys.
        var given: [(what: String, value: String)] = [("--server", server)]
        for (option, value) in [("--ca-file", caFile), ("--certificate", certificate), ("--key", key), ("--user", user),
                                ("--forward-ca-file", relayCAFile)] {
            if let value { given.append((option, option == "--user" ? value : absolute(value))) }
        }
        for option in ["pinned-key", "interface"] {
            if let value = parsed.values[option] { given.append(("--" + option, value)) }
        }
        given += relay.map { ("--" + $0.0, $0.1) }
        for (what, value) in given {
            if let problem = ConfigurationEditor.problem(with: value, localize: Localization.localizer) {
                return usageError("setup", "\(what) \(problem)")
            }
        }
        // The system service has no keyring: its password goes to a file in its own folder.
        let passwordFile = account != nil && user != nil ? SystemSetup.filesFolder(configuration: path) + "/campus-password" : nil
        func configurationText(passwordFile: String?, placed: [String: String] = [:]) -> String {
            func final(_ file: String?) -> String? { file.map { placed[$0] ?? absolute($0) } }
            return Self.configurationText(
                existing, current: current, server: server, caFile: final(caFile), pin: parsed.values["pinned-key"],
                interface: parsed.values["interface"], certificate: final(certificate), key: final(key),
                bundle: bundle, user: user, passwordFile: passwordFile, relay: relay, relayCAFile: final(relayCAFile),
                protocol: chosen, srun: srun)
        }
        // The trial takes the password on standard input; the file names the password file once it is written.
        let text = configurationText(passwordFile: nil)
        let forwards = !(ConfigurationParser.parse(text, file: path, home: ConfigurationFile.home(), localize: Localization.localizer)
            .configuration?.forwardTargets.isEmpty ?? true)

        // The answers are tried from a private file next to the real one (the system service's: among
        // its staged copies), which is written only after a login; it goes with setup, however setup ends.
        if account == nil, let (made, reason) = makeFolders(folder) {
            Output.error(fill(localize("setup: cannot create %s: %s"), made, reason))
            return ExitStatus.failure
        }
        let trial = (staging?.folder ?? folder) + "/.ccrelay-setup-\(getpid()).conf"
        SetupCleanup.register(trial)
        defer {
            unlink(trial)
            SetupCleanup.forget(trial)
        }
        guard write(Array(text.utf8), to: trial) else {
            let reason = SystemError.reason(errno)  // read before gettext may change errno
            Output.error(fill(localize("setup: cannot write in %s: %s"), folder, reason))
            staging?.discard()
            return ExitStatus.failure
        }
        Output.out(fill(localize("Trying to log in to %s…"), server))
        guard tryLogin(trial, bundlePassword: bundlePassword, password: password) else {
            unlink(trial)
            staging?.discard()
            SetupCleanup.removeAll()
            Output.error(localize("setup: nothing was written; fix the answers above and run ccrelay setup again"))
            return ExitStatus.failure
        }
        if let account, let staging {
            unlink(trial)
            // The copies move in, then the password file, then the configuration that names them (the service's alone).
            if let passwordFile { SetupCleanup.register(passwordFile) }
            guard let placed = staging.commit(to: SystemSetup.filesFolder(configuration: path), account: account),
                passwordFile.map({ file in password.map { SystemSetup.writeSecret(Array(($0 + "\n").utf8), to: file, account: account) } ?? true }) ?? true,
                SystemSetup.writeSecret(Array(configurationText(passwordFile: passwordFile, placed: placed).utf8), to: path, account: account)
            else {
                // Nothing half-done stays: the copies placed and the password file go again.
                staging.discard()
                SetupCleanup.removeAll()
                return ExitStatus.failure
            }
            // Done: what it placed is the service's now.
            for target in Array(placed.values) + [passwordFile].compactMap({ $0 }) { SetupCleanup.forget(target) }
            staging.discard()
            for target in placed.values.sorted() {
                Output.out(fill(localize("  Placed %s (the service reads it; its key only the service's user)."), target))
            }
            Output.out(fill(localize("Wrote %s."), path))
            if forwards { testForwarding(path) }
            SystemSetup.finish(instance: CLI.instance, start: !parsed.has("no-autostart"))
            return ExitStatus.ok
        }
        // The passwords go to the keyring before the file appears: a daemon
        // waiting for the configuration starts the moment it does, and asks the keyring then.
        if let user, let password, !(await save(password, as: .campusPassword(user: user))) { return ExitStatus.failure }
        if let certificate, let bundlePassword, !bundlePassword.isEmpty,
            !(await save(bundlePassword, as: .bundlePassword(certificate: absolute(certificate))))
        {
            return ExitStatus.failure
        }
        guard rename(trial, path) == 0 else {
            let reason = SystemError.reason(errno)  // read before gettext may change errno
            Output.error(fill(localize("setup: cannot write %s: %s"), path, reason))
            return ExitStatus.failure
        }
        Output.out(fill(localize("Wrote %s."), path))
        if forwards { testForwarding(path) }
        await SetupDaemon.finish(autostart: !parsed.has("no-autostart"), ranBefore: daemonRan)
        return ExitStatus.ok
    }

    /// An answer to a question: given (typed, an option, or the current one), none, or a file that cannot be used.
    private enum Answer {
        case value(String)
        case none
        case refused(String)
    }

    private static func fileRefused(_ problem: String) -> Int32 {
        Output.error("setup: " + problem)
        return ExitStatus.failure
    }

    /// Why the file at `path` cannot be a certificate, key or CA file, or nil when it can be read.
    static func fileProblem(_ path: String) -> String? {
        var status = stat()
        guard stat(path, &status) == 0 else { return SystemError.reason(errno) }
        guard status.st_mode & S_IFMT == S_IFREG else { return localize("not a file (a folder?)") }
        guard access(path, R_OK) == 0 else { return SystemError.reason(errno) }
        return nil
    }

    /// Asks whether to copy `file` into `folder` with mode 0600; the path to use from then on.
    private static func offerCopy(_ file: String, into folder: String) -> String {
        let source = absolute(file)
        let name = String(source[source.index(after: source.lastIndex(of: "/") ?? source.startIndex)...])
        let target = folder + "/" + name
        guard source != target, source.hasPrefix("/") else { return file }
        Output.prompt(fill(localize("Copy %s to %s, readable only by you? [Y/n] "), source, folder))
        guard let reply = readLine(strippingNewline: true), !reply.lowercased().hasPrefix("n") else { return file }
        guard case .success(let bytes) = BoundedFile.read(source, limit: 1 << 20) else {
            Output.error(fill(localize("  cannot read %s; it stays where it is"), source))
            return file
        }
        if let (made, reason) = makeFolders(folder) {
            Output.error(fill(localize("setup: cannot create %s: %s"), made, reason))
            return file
        }
        if access(target, F_OK) == 0 {
            guard case .success(let there) = BoundedFile.read(target, limit: 1 << 20), there == bytes else {
                Output.error(fill(localize("  %s is there already and differs; %s stays where it is"), target, source))
                return file
            }
            return target
        }
        guard write(bytes, to: target, exclusive: true) else {
            Output.error(fill(localize("  cannot write %s; %s stays where it is"), target, source))
            return file
        }
        Output.out(fill(localize("  Copied to %s (mode 0600)."), target))
        return target
    }

    private static func passwordTooLong() -> Int32 {
        Output.error(localize("setup: the password is longer than 1,024 bytes or not text; is standard input the right file?"))
        return ExitStatus.failure
    }

    /// The current configuration's answers (the defaults of a second run); as
    /// written when the file has errors (`SetupEdit.answers`).
    private static func existingAnswers(_ text: String, file path: String) -> [String: String] {
        guard !text.isEmpty else { return [:] }
        let parsed = ConfigurationParser.parse(text, file: path, home: home(), localize: Localization.localizer)
        guard let configuration = parsed.configuration else { return SetupEdit.answers(text, home: home()) }
        var answers: [String: String] = ["server": configuration.serverURL]
        answers["certificate"] = configuration.certificate
        answers["key"] = configuration.key
        answers["ca-file"] = configuration.caFile
        answers["pinned-key"] = configuration.pinnedKey
        answers["interface"] = configuration.interface
        answers["user"] = configuration.user
        answers["protocol"] = configuration.serverProtocol.rawValue
        if configuration.serverProtocol == .srun {
            answers["ac-id"] = configuration.srun.acID.map(String.init) ?? "auto"
            answers["domain"] = configuration.srun.domain.isEmpty ? nil : configuration.srun.domain
        }
        // Not a question's default: whether alerts are forwarded already (setup --system asks for a target only if not).
        answers["relay"] = configuration.forwardTargets.first?.displayName
        answers["relay-ca-file"] = configuration.forwardCAFile
        return answers
    }

    /// The configuration to write: the existing file (kept for `--force`)
    /// with only the keys setup asked about changed, every other line,
    /// comment and unknown key as it was; a fresh file otherwise. A value
    /// equal to the current one is left as written (`~/…` stays `~/…`).
    private static func configurationText(
        _ existing: String, current: [String: String], server: String, caFile: String?, pin: String?, interface: String?,
        certificate: String?, key: String?, bundle: Bool, user: String?, passwordFile: String? = nil, relay: [(String, String)],
        relayCAFile: String?, protocol chosen: ServerProtocol, srun: SetupPortal.SrunAnswers?
    ) -> String {
        var editor = ConfigurationEditor(existing.isEmpty ? "# Written by ccrelay setup; every key is in ccrelay.conf(5): man ccrelay.conf\n" : existing)
        func update(_ group: String, _ name: String, _ value: String?) {
            guard let value, value != current[name] else { return }
            editor.set(group, name, to: value)
        }
        SetupPortal.write(chosen, srun, into: &editor)
        update("server", "url", server)
        update("server", "ca-file", caFile)
        update("server", "pinned-key", pin)
        update("server", "interface", interface)
        update("auth", "certificate", certificate)
        // A PKCS#12 bundle holds its key: a key line left from a PEM pair would be refused.
        if bundle { editor.remove("auth", "key") } else { update("auth", "key", key) }
        update("auth", "user", user)
        update("auth", "password-file", passwordFile)
        for (service, url) in relay { editor.add("relay", service, url) }
        if let relayCAFile, relayCAFile != current["relay-ca-file"] { editor.set("relay", "ca-file", to: relayCAFile) }
        return editor.text
    }

    /// `ccrelay relay test` on the written configuration; a target that does
    /// not take the test message is reported, and the setup stands.
    static func testForwarding(_ path: String) {
        Output.out(localize("Sending a test message to each forwarding target…"))
        guard let program = helperProgram("ccrelay-daemon"), runToEnd(program, ["--relay-test", "--config", path]) else {
            Output.error(fill(localize("setup: a forwarding target did not take the test message (see above); fix it in %s, then: ccrelay relay test"), path))
            Output.error(localize("setup: a target on the campus whose certificate the system does not trust (a school's own Bark server) needs its CA in [relay] ca-file: ccrelay setup --forward URL --forward-ca-file FILE"))
            return
        }
    }

    /// The home a `~` in a path the user gave stands for: the invoking user's under sudo (`--system`).
    private static func home() -> String {
        CLI.systemService ? SystemSetup.invokingHome() : ConfigurationFile.home()
    }

    /// `path` as the user gave it; under sudo (`--system`), with the full path a `~` in it stands for.
    private static func withFullPath(_ path: String) -> String {
        CLI.systemService && (path == "~" || path.hasPrefix("~/")) ? "\(path) (\(absolute(path)))" : path
    }

    static func absolute(_ path: String) -> String {
        if path == "~" || path.hasPrefix("~/") { return home() + path.dropFirst() }
        guard !path.hasPrefix("/") else { return path }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard let resolved = realpath(path, &buffer) else {
            var here = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            return (getcwd(&here, here.count).map { String(cString: $0) } ?? "") + "/" + path
        }
        return String(cString: resolved)
    }

    /// Makes `folder` and its parents (0700); the one that could not be made and why, when one could not.
    static func makeFolders(_ folder: String) -> (String, String)? {
        var built = ""
        for part in folder.split(separator: "/") {
            built += "/" + part
            if mkdir(built, 0o700) != 0 && errno != EEXIST {
                return (built, SystemError.reason(errno))
            }
        }
        return nil
    }

    /// Writes `bytes` to `path` with mode 0600, never through a link; with
    /// `exclusive`, only as a new file (and a partial one is removed again).
    static func write(_ bytes: [UInt8], to path: String, exclusive: Bool = false) -> Bool {
        let descriptor = open(path, O_WRONLY | O_CREAT | (exclusive ? O_EXCL : O_TRUNC) | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { return false }
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) } == bytes.count
        close(descriptor)
        if !written && exclusive { unlink(path) }
        return written
    }

    /// `ccrelay-daemon --try --config PATH`: the daemon's own checks and one
    /// login; on its stdin the bundle's password (`--p12-password-stdin`), then the campus password.
    private static func tryLogin(_ path: String, bundlePassword: String?, password: String?) -> Bool {
        guard let program = helperProgram("ccrelay-daemon") else {
            Output.error(localize("setup: ccrelay-daemon is missing (reinstall ccrelay)"))
            return false
        }
        let input = [bundlePassword, password].compactMap { $0.map { $0 + "\n" } }.joined()
        return runToEnd(program, ["--try", "--config", path] + (bundlePassword == nil ? [] : ["--p12-password-stdin"]), input: input)
    }

    /// Stores a password in the keyring; says what went wrong and how to save it later.
    private static func save(_ password: String, as item: KeyringItem) async -> Bool {
        /// Why the keyring did not take it (nil: no session bus), said with what to do instead.
        func failed(_ reason: String?) -> Bool {
            switch item {
            case .campusPassword(let user):
                let later = "ccrelay login --save-password --user \(user)"
                if let reason {
                    Output.error(fill(localize("setup: the keyring did not save the password (%s); save it: %s"), reason, later))
                } else {
                    Output.error(fill(localize("setup: no session bus to reach the keyring; save the password later: %s"), later))
                }
                return false
            case .bundlePassword(let certificate): return SetupBundle.noKeyring(certificate, reason: reason ?? localize("no session bus"))
            }
        }
        guard let connection = try? Connection(bus: .session, loop: DispatchScheduler(label: "ccrelay.setup")) else {
            return failed(nil)
        }
        defer { connection.loop.sync { connection.close() } }
        let failure: DBusError? = await withCheckedContinuation { continuation in
            connection.loop.execute {
                SecretService(connection: connection).store(password, as: item) { continuation.resume(returning: $0) }
            }
        }
        if let failure { return failed(failure.message) }
        switch item {
        case .campusPassword(let user): Output.out(fill(localize("Saved the campus password of %s in your keyring."), user))
        case .bundlePassword: Output.out(localize("Saved the certificate's password in your keyring."))
        }
        return true
    }
}
