import DBus
import DBusAsync
import FoundationEssentials
import CCRelayCore
import CoreVocabulary
import DesktopServices
import EventLoop
import Forwarding

/// `ccrelay status [--json] [--watch]`: the daemon's view of the session.
enum StatusCommand {
    static let usage = localize("""
        Usage: ccrelay status [--json] [--watch]

        Shows what the running daemon knows: the session state (offline, logging-in,
        online, failing, logged-out, no-network, sleeping; unconfigured while there
        is no usable configuration, with what to fix), the time left before the
        server would log this computer out, the address granted outside access, the
        server, the unread badge, whether a location fix is sent, the last
        error, and for each [relay] target its queue and last delivery.

        Options:
          --json      print one JSON object with state, badge, urgent, remaining
                      (seconds, or null without a session), ip, server, last_error,
                      last_error_code (a stable code, see the README), next_attempt
                      (seconds until the next request, or null),
                      interval, timeout, location (off, waiting, ok, denied,
                      disabled, unavailable, too-coarse, stopped), version and
                      relay (an array of objects with target, queued,
                      last_delivered (ISO 8601, UTC, or null), last_error,
                      budget_left (null without a budget) and held (quiet-hours,
                      budget, repeat, or empty))
          --watch     keep running and print a line (or, with --json, an object per
                      line) each time the state, badge, address, location or last
                      error changes, until Ctrl-C; waits for the daemon when it is
                      not running
          -h, --help  show this help

        Exit status: 0 ok, 1 no session bus or no answer, 2 usage error,
        3 the daemon is not running (without --watch).
        """)

    static let command = Subcommand(
        name: "status", summary: localize("show the session state, time left, badge and last error"), usage: usage,
        flags: ["json", "watch"], run: run)

    static func run(_ parsed: ParsedArguments) async -> Int32 {
        guard parsed.positionals.isEmpty else { return unexpectedArgument("status", parsed.positionals[0]) }
        let json = parsed.has("json")
        let client: ControlClient
        do { client = try await ControlClient.connect() } catch { return error.report("status") }
        defer { client.close() }
        if parsed.has("watch") { return await watch(client, json: json) }
        do {
            let status = try await client.status()
            if json { Output.json(StatusJSON(status)) } else { Output.out(describe(status)) }
            return ExitStatus.ok
        } catch {
            return error.report("status")
        }
    }

    /// Whether traffic gets out, IPv4 then IPv6, and how long ago that was found.
    static func describeOutside(_ status: DaemonStatus) -> String {
        func word(_ verdict: String) -> String {
            switch verdict {
            case "ok": Style.green(localize("ok"))
            case "portal": Style.red(localize("a login page (portal) answers"))
            case "limited": Style.yellow(localize("limited"))
            default: localize("not checked yet")
            }
        }
        var text = "IPv4 " + word(status.outside) + ", IPv6 " + word(status.outside6)
        if let checked = status.outsideChecked {
            text += " (" + fill(localize("checked %s ago"), duration(max(0, Int64(WallClock.now() - checked)))) + ")"
        }
        return text
    }

    /// The human form: a headline and aligned details.
    static func describe(_ status: DaemonStatus) -> String {
        var lines = ["ccrelay \(Output.printable(status.version)): " + Style.bold(paintState(status.state))]
        func row(_ label: String, _ value: String) { lines.append("  " + CLI.padded(label, 12) + value) }
        row(localize("server"), Output.printable(status.server))
        if !status.ip.isEmpty { row(localize("address"), Output.printable(status.ip)) }
        if status.serverProtocol == ServerProtocol.srun.rawValue, status.remaining != nil {
            // A Srun portal keeps no deadline: ccrelay asks it whether the session lives.
            row(localize("session"), fill(localize("checked every %s s (a Srun portal)"), "\(status.interval)"))
        } else if let remaining = status.remaining {
            row(localize("session"), fill(localize("%s left (keep-alive every %s s, timeout %s s)"), duration(remaining), "\(status.interval)", "\(status.timeout)"))
        } else {
            row(localize("session"), localize("none"))
        }
        let unread = fill(localize("unread alerts: %s"), "\(status.badge)")
        row(localize("badge"), status.urgent ? unread + " " + Style.red(localize("(critical)")) : unread)
        if status.location != "off" { row(localize("location"), describeLocation(status.location)) }
        if status.outside != "off" && status.state == DaemonState.online.rawValue {
            row(localize("outside"), describeOutside(status))
        }
        if !status.lastError.isEmpty {
            row(localize("last error"), lastError(status) + (status.lastErrorCode.isEmpty ? "" : " [\(Output.printable(status.lastErrorCode))]"))
        }
        if let next = status.nextAttempt, status.state != DaemonState.online.rawValue {
            row(localize("next try"), next == 0 ? localize("now") : fill(localize("in %s"), duration(next)))
        }
        if let account = status.account { row(localize("account"), describeAccount(account)) }
        for relay in status.relays { row(localize("forwarding"), describeRelay(relay)) }
        if let problem = status.metrics?.problem, !problem.isEmpty { row(localize("metrics"), Style.red(Output.printable(problem))) }
        return lines.joined(separator: "\n")
    }

    /// What the portal says of the account: its devices, what was used, what is left.
    static func describeAccount(_ account: AccountFacts) -> String {
        var parts: [String] = []
        if let devices = account.devices {
            let list = account.deviceList.map { "\(Output.printable($0.kind)) \(Output.printable($0.address))" }.joined(separator: ", ")
            parts.append(Localization.localizer.plural("%s device online", "%s devices online", count: devices) + (list.isEmpty ? "" : " (\(list))"))
        }
        if let bytes = account.usedBytes { parts.append(fill(localize("%s used"), megabytes(bytes))) }
        if let seconds = account.usedSeconds { parts.append(fill(localize("%s h online"), "\(seconds / 3600)")) }
        if let left = account.remainBytes { parts.append(fill(localize("%s left"), megabytes(left))) }
        if let balance = account.balance { parts.append(fill(localize("balance %s"), String(Double(Int(balance * 100)) / 100))) }
        return parts.isEmpty ? localize("the portal says nothing of it") : parts.joined(separator: ", ")
    }

    private static func megabytes(_ bytes: Int64) -> String {
        bytes >= 1 << 30 ? "\(bytes / (1 << 30)).\((bytes % (1 << 30)) * 10 / (1 << 30)) GiB" : "\(bytes / (1 << 20)) MiB"
    }

    /// One relay target: where, the last delivery, what waits, why it fails.
    static func describeRelay(_ relay: ForwardingSummary) -> String {
        var parts = [Output.printable(relay.target)]
        parts.append(relay.lastDelivered.map { fill(localize("last delivered %s"), TimeText.local($0)) } ?? localize("nothing delivered yet"))
        if relay.queued > 0 { parts.append(Style.yellow(fill(localize("%s waiting"), "\(relay.queued)"))) }
        if let left = relay.budgetLeft { parts.append(fill(localize("%s left in its budget"), "\(left)")) }
        switch relay.held {
        case HoldReason.quietHours.rawValue: parts.append(localize("held for the quiet hours"))
        case HoldReason.budget.rawValue: parts.append(localize("held: over its budget (one digest at the next free slot)"))
        case HoldReason.repeats.rawValue: parts.append(localize("held: the same title went less than 10 minutes ago"))
        default: break
        }
        if !relay.lastError.isEmpty { parts.append(Style.red(Output.printable(relay.lastError))) }
        return parts.joined(separator: " — ")
    }

    static func describeLocation(_ state: String) -> String {
        return switch state {
        case "ok": Style.green(localize("sending a fix with each keep-alive"))
        case "waiting": localize("waiting for a fix")
        case "denied": Style.red(localize("denied for ccrelay (see ccrelay history)"))
        case "disabled": Style.red(localize("location services are off"))
        case "unavailable": Style.red(localize("no location service (GeoClue) running"))
        case "too-coarse": Style.yellow(localize("only an approximate location is allowed"))
        case "stopped": Style.yellow(localize("the location service stopped"))
        default: Output.printable(state)
        }
    }

    /// One `--watch` line: the time, the state, the badge, the time left, the last error.
    static func line(_ status: DaemonStatus) -> String {
        var parts = [paintState(status.state), fill(localize("badge %s"), "\(status.badge)")]
        if let remaining = status.remaining { parts.append(fill(localize("%s left"), duration(remaining))) }
        if !status.lastError.isEmpty && status.state != DaemonState.online.rawValue { parts.append(lastError(status)) }
        return Style.dim(TimeText.clock()) + "  " + parts.joined(separator: "  ")
    }

    /// The daemon's last error in the user's language (the code's sentence; in English the daemon's own).
    static func lastError(_ status: DaemonStatus) -> String {
        Output.printable(ProblemText.localized(status.lastError, code: status.lastErrorCode, localize: Localization.localizer))
    }

    /// The state in the user's words (JSON keeps its English name), coloured.
    static func paintState(_ state: String) -> String {
        let word = Output.printable(TimelineText.state(state, localize: Localization.localizer))
        return switch DaemonState(rawValue: state) {
        case .online?: Style.green(word)
        case .failing?, .noNetwork?, .loggingIn?: Style.yellow(word)
        case .loggedOut?, .unconfigured?: Style.red(word)
        case .offline?, .sleeping?, nil: word
        }
    }

    static func duration(_ seconds: Int64) -> String {
        seconds >= 120
            ? fill(localize("%s min %s s"), "\(seconds / 60)", "\(seconds % 60)") : fill(localize("%s s"), "\(seconds)")
    }

    private enum Change: Sendable {
        case owner(String?)
        case properties
    }

    /// Prints the status whenever the daemon announces a change (PropertiesChanged)
    /// or appears or goes away. Runs until the process is interrupted.
    private static func watch(_ client: ControlClient, json: Bool) async -> Int32 {
        let (changes, continuation) = AsyncStream<Change>.makeStream()
        let connection = client.connection
        client.onPropertiesChanged { continuation.yield(.properties) }
        connection.loop.sync {
            _ = connection.watchName(ControlNames.busName) { continuation.yield(.owner($0)) }
            connection.onDisconnect = { continuation.finish() }
        }
        var running = false
        var changed = StatusChangeFilter()
        for await change in changes {
            if case .owner(let owner) = change {
                running = owner != nil
                changed = StatusChangeFilter()
                if !running {
                    if json { Output.out(#"{"state":"not-running"}"#) } else { Output.out(Style.dim(TimeText.clock()) + "  " + localize("daemon not running")) }
                    continue
                }
            }
            guard running else { continue }
            do {
                let status = try await client.status()
                guard changed.isNew(status) else { continue }
                if json { Output.json(StatusJSON(status)) } else { Output.out(line(status)) }
            } catch {
                if case .failed = error { _ = error.report("status") }
            }
        }
        Output.error("status: " + localize("the session bus went away"))
        return ExitStatus.failure
    }
}

/// `ccrelay status --json`: the keys of docs/contracts.md, `remaining` null without a session.
struct StatusJSON: Encodable {
    var status: DaemonStatus
    init(_ status: DaemonStatus) { self.status = status }

    enum Keys: String, CodingKey, CaseIterable {
        case state, badge, urgent, remaining, ip, server, lastError = "last_error", lastErrorCode = "last_error_code"
        case nextAttempt = "next_attempt", interval, timeout, location, outside, outside6, outsideChecked = "outside_checked", version, relay
        case serverProtocol = "protocol", account
    }

    /// `account`: what the portal says of it, each value null when unknown.
    struct AccountJSON: Encodable {
        var account: AccountFacts
        enum Keys: String, CodingKey, CaseIterable {
            case devices, deviceList = "device_list", usedBytes = "used_bytes", usedSeconds = "used_seconds", remainBytes = "remain_bytes"
            case balance, onlineIP = "online_ip"
        }
        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(account.devices, forKey: .devices)
            try container.encode(account.deviceList.map { ["kind": $0.kind, "address": $0.address] }, forKey: .deviceList)
            try container.encode(account.usedBytes, forKey: .usedBytes)
            try container.encode(account.usedSeconds, forKey: .usedSeconds)
            try container.encode(account.remainBytes, forKey: .remainBytes)
            try container.encode(account.balance, forKey: .balance)
            try container.encode(account.onlineIP, forKey: .onlineIP)
        }
    }

    /// One `relay` element.
    struct RelayJSON: Encodable {
        var relay: ForwardingSummary
        enum Keys: String, CodingKey, CaseIterable {
            case target, queued, lastDelivered = "last_delivered", lastError = "last_error", budgetLeft = "budget_left", held
        }
        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(relay.target, forKey: .target)
            try container.encode(relay.queued, forKey: .queued)
            try container.encode(relay.lastDelivered.map(TimeText.iso8601), forKey: .lastDelivered)
            try container.encode(relay.lastError, forKey: .lastError)
            try container.encode(relay.budgetLeft, forKey: .budgetLeft)
            try container.encode(relay.held, forKey: .held)
        }
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(status.state, forKey: .state)
        try container.encode(status.badge, forKey: .badge)
        try container.encode(status.urgent, forKey: .urgent)
        try container.encode(status.remaining, forKey: .remaining)
        try container.encode(status.ip, forKey: .ip)
        try container.encode(status.server, forKey: .server)
        try container.encode(status.lastError, forKey: .lastError)
        try container.encode(status.lastErrorCode, forKey: .lastErrorCode)
        try container.encode(status.nextAttempt, forKey: .nextAttempt)
        try container.encode(status.interval, forKey: .interval)
        try container.encode(status.timeout, forKey: .timeout)
        try container.encode(status.location, forKey: .location)
        try container.encode(status.outside, forKey: .outside)
        try container.encode(status.outside6, forKey: .outside6)
        try container.encode(status.outsideChecked.map(TimeText.iso8601), forKey: .outsideChecked)
        try container.encode(status.version, forKey: .version)
        try container.encode(status.relays.map(RelayJSON.init), forKey: .relay)
        try container.encode(status.serverProtocol, forKey: .serverProtocol)
        try container.encode(status.account.map(AccountJSON.init), forKey: .account)
    }
}

/// `status --watch` prints each change once: the daemon may announce one
/// change in several signals (State, then Badge), and each signal's status
/// read may already see the same, latest state. The time left does not count.
struct StatusChangeFilter {
    private var last: [String]?

    mutating func isNew(_ status: DaemonStatus) -> Bool {
        let key = [status.state, "\(status.badge)", "\(status.urgent)", status.ip, status.lastError, status.location, status.outside, status.outside6]
        defer { last = key }
        return key != last
    }
}
