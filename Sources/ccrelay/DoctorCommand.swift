import AlertJournal
import DBus
import DBusAsync
import DesktopServices
import DispatchLoop
import EventLoop
import FileAccess
import FoundationEssentials
import CCRelayCore
import CoreVocabulary
#if canImport(Glibc)
import Glibc
#endif

/// `ccrelay doctor`: one report a student can paste into an issue — what
/// runs, what the configuration check says, what the daemon sees, what the
/// desktop offers — each line `ok`, `warn` or `fail` with the fix for a
/// `fail`, every identifier taken out (the home folder and user name, the
/// account, the address beyond its first two parts). It asks; it never
/// changes anything, and works without a daemon, a bus or a readable configuration.
enum DoctorCommand {
    static let usage = localize("""
        Usage: ccrelay doctor [--config PATH] [--json]

        Prints a report to paste into a bug report or a question to campus IT:
        ccrelay's version, the system and libcurl, the configuration check, the
        certificate's expiry, the campus server over IPv4 and IPv6 (name, TCP,
        TLS, the client certificate: no login) or the Srun portal (its
        rad_user_info: no login), the portal this network puts in front of an
        anonymous request (Srun with its ac_id, version and captcha, Ruijie
        ePortal, Dr.COM, CC/1, none or unknown), the outside probe, what the
        daemon sees (state, outside access, the last error), the notification
        server, the tray, the dock, the keyring, NetworkManager, the alert
        journal and the last 20 timeline entries. Each line says ok, warn or
        fail, with the fix for a fail, and is printed as soon as it is known;
        the report ends within about 30 seconds whatever the network does (a
        line says what did not answer in time). Your home folder, user name,
        account and addresses are left out. It changes nothing.

        Options:
          --config PATH  check this configuration instead of the usual one
          --json         print the report as a JSON array
          -h, --help     show this help

        Exit status: 0 when no line says fail, 1 when one does, 2 on a usage error.
        """)

    static let command = Subcommand(
        name: "doctor", summary: localize("print a report of what works and what does not, to paste into a question"),
        usage: usage, flags: ["json"], valued: ["config"], values: ["config": Subcommand.fileValue], run: run)

    /// One finding.
    struct Finding: Encodable {
        var area: String
        var verdict: String
        var text: String
        var fix: String?
    }

    static func run(_ parsed: ParsedArguments) async -> Int32 {
        guard parsed.positionals.isEmpty else { return unexpectedArgument("doctor", parsed.positionals[0]) }
        let path = parsed.values["config"]
            ?? (CLI.systemService ? SystemService.configurationPath(instance: CLI.instance) : ConfigurationFile.defaultPath())
        let json = parsed.has("json")
        // The report is printed as it is found (a slow network shows where it waits); --json prints it whole at the end.
        var report = Report(secrets: secrets(in: path), printing: !json)
        system(&report)
        if configuration(path, &report) { network(path, &report) }
        await daemon(&report)
        await desktop(&report)
        await networkManager(&report)
        if CLI.systemService {
            // The service's journal is its own: it is asked, never opened (issue 31.5).
            await serviceJournal(&report)
        } else {
            journal(&report)
            timeline(&report)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            guard let data = try? encoder.encode(report.findings) else { return ExitStatus.failure }
            Output.out(String(decoding: data, as: UTF8.self))
        }
        return report.findings.contains { $0.verdict == "fail" } ? ExitStatus.failure : ExitStatus.ok
    }

    /// The longest doctor waits for the network lines (the helper bounds itself
    /// at `Diagnose.deadline`, 15 s; this is for a helper that hangs anyway), and
    /// for any one question on a bus.
    static let networkDeadline = Duration.seconds(20)
    static let busDeadline = Duration.seconds(3)

    /// The findings, each with the identifiers taken out as it is added, and printed then when `printing`.
    struct Report {
        var secrets: [String]
        var printing: Bool
        var findings: [Finding] = []

        mutating func add(_ area: String, _ verdict: String, _ text: String, fix: String? = nil) {
            let finding = Finding(area: area, verdict: verdict, text: redacted(text), fix: fix.map(redacted))
            findings.append(finding)
            if printing { Output.out(Self.line(finding)) }
        }

        private static func line(_ finding: Finding) -> String {
            let mark =
                switch finding.verdict {
                case "ok": Style.green("ok  ")
                case "warn": Style.yellow("warn")
                default: Style.red("fail")
                }
            return "\(mark) \(CLI.padded(finding.area, 14))\(finding.text)"
                + (finding.fix.map { "\n     " + String(repeating: " ", count: 14) + "fix: " + $0 } ?? "")
        }

        /// `text` without the account, the user's name and home, and with addresses cut to their first two parts.
        func redacted(_ text: String) -> String {
            var text = Output.printable(text)
            for secret in secrets where secret.count >= 3 { text = text.replacing(secret, with: "…") }
            return DoctorCommand.cutAddresses(text)
        }
    }

    /// The command that sets this daemon up.
    static var setupCommand: String {
        CLI.systemService ? "sudo ccrelay --system" + (CLI.instance.map { "=" + $0 } ?? "") + " setup" : "ccrelay setup"
    }

    /// What must not appear in the report: the home folder (it holds the
    /// user's name), the user name, and the account a password login uses.
    static func secrets(in path: String) -> [String] {
        var secrets = [ConfigurationFile.home()].filter { $0.count > 1 }
        if let name = getpwuid(getuid())?.pointee.pw_name { secrets.append(String(cString: name)) }
        if let configuration = ConfigurationFile.load(path).configuration, let user = configuration.user { secrets.append(user) }
        // Longest first: the home folder goes before the user name inside it.
        return secrets.sorted { $0.count > $1.count }
    }

    /// IPv4 addresses as their first two parts (`10.20.x.x`) and IPv6
    /// addresses as their first two groups (`2001:da8:…`, loopback kept):
    /// enough to tell a campus range, not a machine.
    static func cutAddresses(_ text: String) -> String {
        cutIPv6(cutIPv4(text))
    }

    private static func cutIPv6(_ text: String) -> String {
        replacingRuns(in: text, of: { $0.isHexDigit || $0 == ":" }) { token in
            // "ADDRESS:" ends a phrase: the colon is the sentence's, not the address's.
            let colon = token.hasSuffix(":") && !token.hasSuffix("::")
            let word = colon ? String(token.dropLast()) : token
            let groups = word.split(separator: ":", omittingEmptySubsequences: false)
            let isAddress = (word.contains("::") || groups.count == 8) && groups.count >= 3 && groups.count <= 8
                && groups.allSatisfy { $0.count <= 4 } && word != "::1"
            return (isAddress ? groups.prefix(2).joined(separator: ":") + ":…" : word) + (colon ? ":" : "")
        }
    }

    private static func cutIPv4(_ text: String) -> String {
        replacingRuns(in: text, of: { $0.isNumber || $0 == "." }) { token in
            // "ADDRESS." ends a sentence: the full stop is the sentence's, not the address's.
            let stop = token.hasSuffix(".")
            let word = stop ? String(token.dropLast()) : token
            let parts = word.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 4, parts.allSatisfy({ !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isNumber) }) else { return token }
            return "\(parts[0]).\(parts[1]).x.x" + (stop ? "." : "")
        }
    }

    /// `text` with each longest run of characters that `belongs` replaced by what `replace` makes of it.
    private static func replacingRuns(in text: String, of belongs: (Character) -> Bool, _ replace: (String) -> String) -> String {
        var out = ""
        var run = ""
        for character in text {
            if belongs(character) {
                run.append(character)
            } else {
                if !run.isEmpty { out += replace(run) }
                run = ""
                out.append(character)
            }
        }
        if !run.isEmpty { out += replace(run) }
        return out
    }

    /// glibc's `_CS_GNU_LIBC_VERSION` ("glibc 2.36").
    private static func libcVersion() -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        _ = confstr(Int32(_CS_GNU_LIBC_VERSION), &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    // MARK: The checks

    private static func system(_ report: inout Report) {
        report.add("ccrelay", "ok", "\(ccrelayVersion)" + (CLI.systemService ? " (the system service)" : ""))
        let release = (try? String(contentsOfFile: "/etc/os-release", encoding: .utf8)) ?? ""
        let pretty = release.split(separator: "\n").first { $0.hasPrefix("PRETTY_NAME=") }
            .map { $0.dropFirst("PRETTY_NAME=".count).filter { $0 != "\"" } } ?? "unknown"
        let glibc = confstr(Int32(_CS_GNU_LIBC_VERSION), nil, 0) > 0 ? libcVersion() : "unknown"
        report.add("system", "ok", "\(pretty), \(glibc)")
        let desktop = [getenv("XDG_CURRENT_DESKTOP"), getenv("XDG_SESSION_TYPE")].map { $0.map { String(cString: $0) } ?? "-" }
        report.add("desktop", "ok", "\(desktop[0]) (\(desktop[1]))")
    }

    /// The configuration check's lines; whether the configuration can be used.
    private static func configuration(_ path: String, _ report: inout Report) -> Bool {
        guard access(path, F_OK) == 0 else {
            // A folder this user may not enter is no missing file (the system service's /etc/ccrelay is root:ccrelay 0750).
            if errno == EACCES {
                report.add("configuration", "warn", fill(localize("%s: you may not read it (only root and the service may)"), path),
                           fix: "sudo ccrelay" + (CLI.systemService ? " --system" + (CLI.instance.map { "=" + $0 } ?? "") : "") + " doctor")
            } else {
                report.add("configuration", "fail", "\(path) does not exist", fix: setupCommand)
            }
            return false
        }
        guard let program = helperProgram("ccrelay-daemon") else {
            report.add("configuration", "fail", "ccrelay-daemon is missing", fix: "reinstall ccrelay")
            return false
        }
        let (exit, output) = runChild(program, (CLI.systemService ? ["--system"] : []) + ["--check", "--config", path], output: .capture)
        let status = exit ?? -1
        let lines = output.split(separator: "\n").map { String($0.dropFirst($0.hasPrefix("ccrelay: ") ? "ccrelay: ".count : 0)) }
        if status == 0 {
            report.add("configuration", lines.contains { $0.hasPrefix("warning:") } ? "warn" : "ok", "\(path): ok")
            for line in lines where line.hasPrefix("warning:") { report.add("configuration", "warn", line) }
        } else {
            for line in lines.prefix(10) {
                report.add("configuration", "fail", line, fix: line.hasPrefix("error:") ? "edit the file, or: ccrelay setup --edit" : nil)
            }
            if lines.isEmpty { report.add("configuration", "fail", "the check failed without a word (status \(status))") }
        }
        return status == 0
    }

    /// libcurl, the certificate, the CC server over IPv4 and IPv6 (or the
    /// Srun portal), the portal in front of an anonymous request and the
    /// outside probe, from `ccrelay-daemon --diagnose` (the process with
    /// libcurl), each line as it comes; a helper that outlives
    /// `networkDeadline` is ended and what it did not say is a line that says so.
    private static func network(_ path: String, _ report: inout Report) {
        guard let program = helperProgram("ccrelay-daemon") else { return }
        var said: Set<String> = []
        let (exit, finished) = runChildLines(
            program, (CLI.systemService ? ["--system"] : []) + ["--diagnose", "--config", path], deadline: networkDeadline
        ) { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 4, ["ok", "warn", "fail"].contains(fields[1]) else { return }
            report.add(fields[0], fields[1], fields[2], fix: fields[3].isEmpty ? nil : fields[3])
            said.insert(fields[0])
        }
        if !finished {
            for area in ["server", "portal", "outside"] where !said.contains(area) {
                report.add(area, "warn", "not finished: no answer within \(networkDeadline.components.seconds) s",
                           fix: area == "server" ? "check the network (ip route), [server] url and [server] interface" : nil)
            }
        } else if !said.contains("server") {
            report.add("server", "fail", "the network check ended without a word (status \(exit ?? -1))", fix: "reinstall ccrelay")
        }
    }

    /// NetworkManager's state and its own connectivity check, when it runs.
    private static func networkManager(_ report: inout Report) async {
        guard let system = try? Connection(bus: .system, loop: DispatchScheduler(label: "ccrelay.doctor.system")) else {
            return report.add("network", "warn", "no system bus: network changes and sleep are not followed")
        }
        defer { system.loop.sync { system.close() } }
        let name = "org.freedesktop.NetworkManager"
        guard ((try? await system.nameOwner(name)) ?? nil) != nil else {
            return report.add("network", "ok", "no NetworkManager (network changes through netlink)")
        }
        func property(_ member: String) async -> UInt32? {
            let reply = try? await system.call(.methodCall(
                destination: name, path: "/org/freedesktop/NetworkManager", interface: "org.freedesktop.DBus.Properties", member: "Get",
                body: [.string(name), .string(member)]), timeout: busDeadline)
            return (try? reply?.argument(0, as: Variant.self))?.get(UInt32.self)
        }
        let state = await property("State") ?? 0
        let connectivity = (await property("Connectivity")).flatMap(NetworkConnectivity.init(rawValue:)) ?? .unknown
        let states: [UInt32: String] = [10: "asleep", 20: "disconnected", 30: "disconnecting", 40: "connecting", 50: "connected (local)",
                                        60: "connected (site)", 70: "connected (global)"]
        report.add("network", state >= 50 ? "ok" : "warn",
                   "NetworkManager: \(states[state] ?? "state \(state)"), its own check says \(connectivity.name)",
                   fix: state >= 50 ? nil : "connect to the campus network (nmcli device)")
    }

    private static func daemon(_ report: inout Report) async {
        let client: ControlClient
        do {
            client = try await ControlClient.connect()
        } catch .notRunning {
            return report.add("daemon", "warn", "not running", fix: CLI.systemService ? "systemctl start ccrelay" : "systemctl --user start ccrelay")
        } catch {
            return report.add("daemon", "fail", "no bus to ask it on", fix: "run this inside your desktop session, or: ccrelay --system doctor")
        }
        defer { client.close() }
        let status: DaemonStatus
        do {
            status = try await client.status(timeout: busDeadline)
        } catch .notRunning {
            return report.add("daemon", "warn", "not running", fix: CLI.systemService ? "systemctl start ccrelay" : "systemctl --user start ccrelay")
        } catch {
            return report.add("daemon", "fail", "it did not answer", fix: "journalctl --user -u ccrelay shows why")
        }
        let healthy = [DaemonState.online.rawValue, DaemonState.loggingIn.rawValue, DaemonState.sleeping.rawValue].contains(status.state)
        report.add("daemon", healthy ? "ok" : "fail", "\(status.state), server \(status.server), address \(status.ip.isEmpty ? "-" : status.ip)",
                   fix: healthy ? nil : status.lastError.isEmpty ? "ccrelay login" : status.lastError)
        if !status.lastError.isEmpty && healthy {
            report.add("daemon", "warn", "last error: \(status.lastError) [\(status.lastErrorCode)]")
        }
        if status.outside != "off" {
            let ok = status.outside == "ok" || status.outside6 == "ok" || status.state != DaemonState.online.rawValue
            report.add("outside", ok ? "ok" : "warn", "IPv4 \(status.outside), IPv6 \(status.outside6)",
                       fix: ok ? nil : "a login page in the browser (portal), or ask campus IT")
        }
        for relay in status.relays {
            report.add("forwarding", relay.queued == 0 ? "ok" : "warn", "\(relay.target): \(relay.queued) waiting"
                + (relay.lastError.isEmpty ? "" : ", last error \(relay.lastError)"))
        }
    }

    private static func desktop(_ report: inout Report) async {
        guard !CLI.systemService else { return }
        guard let connection = try? Connection(bus: .session, loop: DispatchScheduler(label: "ccrelay.doctor")) else {
            return report.add("session bus", "fail", "none", fix: "run this inside your desktop session")
        }
        defer { connection.loop.sync { connection.close() } }
        func owned(_ name: String) async -> Bool { ((try? await connection.nameOwner(name)) ?? nil) != nil }
        if await owned(Notifier.busName) {
            let info = try? await connection.call(.methodCall(
                destination: Notifier.busName, path: Notifier.path, interface: Notifier.interface, member: "GetServerInformation"),
                timeout: busDeadline)
            let name = (try? info?.argument(0, as: String.self)) ?? "unknown"
            let version = (try? info?.argument(2, as: String.self)) ?? ""
            let capabilities = try? await connection.call(.methodCall(
                destination: Notifier.busName, path: Notifier.path, interface: Notifier.interface, member: "GetCapabilities"),
                timeout: busDeadline)
            let words = ((try? capabilities?.argument(0, as: [String].self)) ?? []).joined(separator: " ")
            report.add("notifications", "ok", "\(name) \(version): \(words)")
        } else {
            report.add("notifications", "fail", "no notification server", fix: "start your desktop's notification service, or dunst")
        }
        report.add("tray", await owned("org.kde.StatusNotifierWatcher") ? "ok" : "warn",
                   await owned("org.kde.StatusNotifierWatcher") ? "a tray host is there" : "no tray (StatusNotifierWatcher): the icon is not shown")
        report.add("dock", "ok", await owned("com.canonical.Unity") ? "a dock shows the badge" : "no dock (com.canonical.Unity) shows the badge")
        let keyring = await owned("org.freedesktop.secrets")
        report.add("keyring", keyring ? "ok" : "warn", keyring ? "the Secret Service answers" : "no Secret Service: a password login cannot keep its password")
    }

    /// The newest 20 changes of the timeline: why the session dropped, when it did.
    private static func timeline(_ report: inout Report) {
        guard access(JournalFile.path, F_OK) == 0,
            let entries = try? JournalFile.open({ store throws(StoreError) in try store.timeline(since: 0) })
        else { return }
        for entry in entries.suffix(20) {
            let what = entry.subject == .outside ? "outside " : ""
            report.add("timeline", "ok", "\(TimeText.local(entry.at))  \(what)\(entry.from) → \(entry.to)  \(entry.cause)")
        }
    }

    /// The system service's journal and timeline, as the running service reports them.
    private static func serviceJournal(_ report: inout Report) async {
        guard let client = try? await ControlClient.connect() else { return }
        defer { client.close() }
        let since = WallClock.now() - 7 * 86_400
        do {
            let status = try await client.status(timeout: busDeadline)
            report.add("journal", "ok", fill(localize("kept by the service: %s unread"), "\(status.badge)"))
            for entry in try await client.timeline(since: since).suffix(20) {
                let what = entry.subject == .outside ? "outside " : ""
                report.add("timeline", "ok", "\(TimeText.local(entry.at))  \(what)\(entry.from) → \(entry.to)  \(entry.cause)")
            }
        } catch {
            switch error {
            case .notRunning: report.add("journal", "warn", localize("kept by the service, which is not running"))
            case .failed(let why): report.add("journal", "warn", fill(localize("the service did not say: %s"), why))
            }
        }
    }

    private static func journal(_ report: inout Report) {
        let path = JournalFile.path
        guard access(path, F_OK) == 0 else { return report.add("journal", "ok", "\(path): none yet") }
        var info = stat()
        let size = stat(path, &info) == 0 ? Int(info.st_size) : 0
        let folder = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        let writable = access(folder, W_OK) == 0 && access(path, W_OK) == 0
        let unread = (try? AlertStore(path: path, log: { _ in }).badge().count) ?? -1
        report.add("journal", writable && unread >= 0 ? "ok" : "fail",
                   "\(path): \(size / 1024) KiB" + (unread >= 0 ? ", schema \(AlertStore.schemaVersion), \(unread) unread" : ", cannot be read")
                       + (writable ? "" : ", not writable"),
                   fix: writable && unread >= 0 ? nil : "check the folder's owner and free space: df -h \(folder)")
    }
}
