import CCRelayCore
#if canImport(Glibc)
import Glibc
#endif

/// `ccrelay setup`'s login protocol: what an anonymous GET of a plain-http
/// page shows (`ccrelay-daemon --discover`: this program does not link
/// libcurl) is offered first, then the protocol is asked, and for a Srun
/// portal its `[srun]` answers.
enum SetupPortal {
    /// What `ccrelay-daemon --discover` printed, each value cleaned for a terminal.
    struct Found {
        /// srun, ruijie, drcom, other, none or unreachable.
        var family = "unreachable"
        var from = ""
        var landing: String?
        var portal: String?
        var acID: String?
        var error: String?
    }

    /// A Srun portal's answers, as `[srun]` keys (nil: leave the key as it is).
    struct SrunAnswers {
        var acID: String
        var domain: String?
        var hmd5: String?
    }

    /// The options that only a Srun portal takes, and those only CC/1 does.
    static let srunOptions = ["ac-id", "domain", "hmd5"]
    static let cc1Options = ["certificate", "key", "p12-password-stdin"]

    /// The longest setup waits for the helper (which bounds itself at 15 s).
    static let deadline = Duration.seconds(25)

    /// The protocol to set up, from `--protocol`, else asked on a terminal
    /// (what the network shows offered first) or taken from what was found,
    /// the current configuration, or the Srun options given; CC/1 otherwise.
    /// The network is asked with `--discover-from`, on a terminal without
    /// `--protocol`, and for `--protocol srun` without `--server`. A Srun
    /// portal found becomes the default server and ac_id when the current
    /// configuration is not a Srun one.
    static func choose(_ parsed: ParsedArguments, current: inout [String: String], asking: Bool, probeURLs: [String])
        -> Result<ServerProtocol, UsageError>
    {
        let given = parsed.values["protocol"]
        if let given {
            guard let named = ServerProtocol(rawValue: given) else {
                return .failure(UsageError(message: fill(localize("--protocol must be cc1 or srun, not '%s'"), Output.printable(given))))
            }
            // Said before the network is asked.
            if let problem = conflict(parsed, named) { return .failure(problem) }
        }
        var found: Found?
        if parsed.values["discover-from"] != nil || (given == nil && asking)
            || (given == "srun" && parsed.values["server"] == nil && current["protocol"] != "srun")
        {
            let urls = parsed.values["discover-from"].map { [$0] } ?? probeURLs
            Output.out(fill(localize("Looking for the campus portal (an anonymous GET of %s)…"), urls.joined(separator: ", ")))
            let result = discover(urls, interface: parsed.values["interface"] ?? current["interface"])
            Output.out("  " + describe(result))
            found = result
        }
        let srunGiven = srunOptions.contains { parsed.values[$0] != nil }
        let fallback = given ?? (found?.family == "srun" ? "srun" : current["protocol"] ?? (srunGiven ? "srun" : "cc1"))
        var chosen = ServerProtocol(rawValue: fallback) ?? .cc1
        if given == nil && asking { chosen = ask(default: chosen) }
        if let problem = conflict(parsed, chosen) { return .failure(problem) }
        if chosen == .srun && current["protocol"] != "srun" {
            current["server"] = found?.family == "srun" ? found?.portal : nil
            current["ac-id"] = found?.family == "srun" ? found?.acID : nil
        } else if chosen == .cc1 && current["protocol"] == "srun" {
            current["server"] = nil
        }
        return .success(chosen)
    }

    /// An option the protocol does not take, as a usage error.
    private static func conflict(_ parsed: ParsedArguments, _ chosen: ServerProtocol) -> UsageError? {
        if chosen == .srun, let option = cc1Options.first(where: { parsed.values[$0] != nil || parsed.has($0) }) {
            return UsageError(message: fill(localize("--%s goes with --protocol cc1: a Srun portal logs in with --user and a password"), option))
        }
        if chosen == .cc1, let option = srunOptions.first(where: { parsed.values[$0] != nil }) {
            return UsageError(message: fill(localize("--%s goes with --protocol srun"), option))
        }
        return nil
    }

    /// Asks for the protocol until the answer is one; Enter takes `fallback`.
    private static func ask(default fallback: ServerProtocol) -> ServerProtocol {
        while true {
            Output.prompt(localize("Login protocol: cc1 (a CC server, with a certificate or a password) or srun (a Srun 深澜 portal)")
                + " [\(fallback.rawValue)]: ")
            guard let line = readLine(strippingNewline: true) else { return fallback }
            let typed = line.filter { !$0.isWhitespace }.lowercased()
            if typed.isEmpty { return fallback }
            if let chosen = ServerProtocol(rawValue: typed) { return chosen }
            Output.error(localize("  type cc1 or srun (Ctrl-C stops setup)"))
        }
    }

    /// The `[srun]` answers: `--ac-id` (else asked, else the current or found one, else auto), `--domain` (asked), `--hmd5`.
    static func srunAnswers(_ parsed: ParsedArguments, current: [String: String], asking: Bool) -> Result<SrunAnswers, UsageError> {
        var acID = parsed.values["ac-id"] ?? current["ac-id"] ?? "auto"
        var domain = parsed.values["domain"]
        if asking && parsed.values["ac-id"] == nil {
            acID = typed(localize("The portal's ac_id (the digits after ac_id= in its address; auto finds it at each start)"), acID) ?? acID
        }
        if asking && domain == nil {
            domain = typed(localize("Domain suffix the portal's list adds to the user name, such as @cmcc"), current["domain"])
        }
        guard acID == "auto" || (1...6).contains(acID.count) && acID.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            return .failure(UsageError(message: fill(localize("--ac-id must be auto or the portal's ac_id number, not '%s'"), Output.printable(acID))))
        }
        if let domain, domain.isEmpty || domain.count > 64 || !domain.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F && $0 != "&" && $0 != "#" }) {
            return .failure(UsageError(message: fill(localize("--domain must be the suffix the portal adds to the user name, such as @cmcc, not '%s'"), Output.printable(domain))))
        }
        if let hmd5 = parsed.values["hmd5"], SrunSettings.Digest(rawValue: hmd5) == nil {
            return .failure(UsageError(message: fill(localize("--hmd5 must be hmac, hmac-empty or md5, not '%s'"), Output.printable(hmd5))))
        }
        return .success(SrunAnswers(acID: acID, domain: domain, hmd5: parsed.values["hmd5"]))
    }

    /// One line typed after `question [shown]: `; nil when nothing was (Enter, or the end of the input).
    private static func typed(_ question: String, _ shown: String?) -> String? {
        Output.prompt(question + (shown.map { " [\($0)]" } ?? " " + localize("(none)")) + ": ")
        let line = readLine(strippingNewline: true).map { String($0.filter { !$0.isWhitespace }) } ?? ""
        return line.isEmpty ? nil : line
    }

    /// Writes the protocol and the `[srun]` answers into `editor` (a key
    /// the file has with that value already is left as written): a Srun
    /// portal's certificate lines go; CC/1 after a Srun portal drops `[srun]`.
    static func write(_ chosen: ServerProtocol, _ srun: SrunAnswers?, into editor: inout ConfigurationEditor) {
        func update(_ group: String, _ name: String, _ value: String?) {
            guard let value, value != editor.value(group, name) else { return }
            editor.set(group, name, to: value)
        }
        let was = editor.value("server", "protocol") ?? ServerProtocol.cc1.rawValue
        if was != chosen.rawValue { editor.set("server", "protocol", to: chosen.rawValue) }
        if let srun {
            update("srun", "ac-id", srun.acID)
            update("srun", "domain", srun.domain)
            update("srun", "hmd5", srun.hmd5)
            editor.remove("auth", "certificate")
            editor.remove("auth", "key")
        } else if was == ServerProtocol.srun.rawValue {
            for key in ["ac-id", "domain", "hmd5", "double-stack", "poll", "logout"] { editor.remove("srun", key) }
        }
    }

    /// Runs `ccrelay-daemon --discover`; what it found (family unreachable when it could not run or said nothing).
    static func discover(_ urls: [String], interface: String?) -> Found {
        var found = Found(from: urls.first ?? "")
        guard let program = helperProgram("ccrelay-daemon") else {
            found.error = localize("ccrelay-daemon is missing (reinstall ccrelay)")
            return found
        }
        var seen: Set<String> = []
        let (_, finished) = runChildLines(program, ["--discover"] + (interface.map { ["--interface", $0] } ?? []) + urls, deadline: deadline) { line in
            let fields = line.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 2, seen.insert(fields[0]).inserted else { return }
            let value = Output.printable(String(fields[1].prefix(2048)))
            switch fields[0] {
            case "from": found.from = value
            case "family": found.family = value
            case "landing": found.landing = value
            case "portal": found.portal = value
            case "ac_id": found.acID = value.allSatisfy({ $0.isASCII && $0.isNumber }) && value.count <= 6 ? value : nil
            case "error": found.error = value
            default: break
            }
        }
        if !finished { found.error = fill(localize("no answer within %s s"), "\(deadline.components.seconds)") }
        return found
    }

    /// What was found, in a sentence.
    static func describe(_ found: Found) -> String {
        let at = found.landing ?? found.from
        switch found.family {
        case "srun":
            return found.acID.map { fill(localize("Found a Srun (深澜) portal at %s (ac_id %s)."), found.portal ?? at, $0) }
                ?? fill(localize("Found a Srun (深澜) portal at %s (it showed no ac_id: auto finds it at each start)."), found.portal ?? at)
        case "ruijie": return fill(localize("Found a Ruijie ePortal (锐捷) at %s: ccrelay cannot log in to it (it speaks CC/1 and Srun)."), at)
        case "drcom": return fill(localize("Found a Dr.COM (城市热点) portal at %s: ccrelay cannot log in to it (it speaks CC/1 and Srun)."), at)
        case "none": return fill(localize("No portal: %s answered itself (this computer is online already, or nothing stands in the way)."), found.from)
        case "other": return fill(localize("%s led to %s, a page of no portal family ccrelay knows."), found.from, at)
        default: return fill(localize("No answer from %s (%s)."), found.from, found.error ?? localize("no answer"))
        }
    }
}
