import CoreVocabulary
/// ccrelay's metrics in Prometheus' text exposition format (0.0.4), as the
/// node exporter's textfile collector reads them: a `HELP` and a `TYPE`
/// line for each family with a series, stable names with their units in
/// them, label values escaped and bounded. No secret, account name or
/// address is in a label: the facts hold none.
public enum MetricsText {
    /// The longest label value, in characters (a longer one is cut).
    public static let labelLimit = 200

    /// The text for `facts`, ending with a newline.
    public static func render(_ facts: MetricsFacts) -> String {
        var text = ""
        let instance = ("instance", facts.instance)
        func family(_ name: String, _ type: String, _ help: String, _ samples: [([(String, String)], String)]) {
            guard !samples.isEmpty else { return }
            text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
            for (labels, value) in samples {
                text += name + "{" + (labels + [instance]).map { "\($0.0)=\"\(labelValue($0.1))\"" }.joined(separator: ",") + "} " + value + "\n"
            }
        }
        family("ccrelay_info", "gauge", "The daemon's version and the campus protocol it speaks (always 1).",
               [([("version", facts.version), ("protocol", facts.protocolName)], "1")])
        family("ccrelay_state", "gauge", "The daemon's state: 1 for the current one, 0 for the others.",
               oneOf(DaemonState.allCases.map(\.rawValue), current: facts.state).map { ([("state", $0.0)], $0.1) })
        family("ccrelay_state_changed_timestamp_seconds", "gauge", "When the state last changed, in seconds since the Unix epoch.",
               seconds(facts.stateChanged).map { [([], $0)] } ?? [])
        family("ccrelay_session_expires_timestamp_seconds", "gauge",
               "When the campus server ends the session without another keep-alive, in seconds since the Unix epoch (none without a session).",
               seconds(facts.sessionExpires).map { [([], $0)] } ?? [])
        family("ccrelay_drops_total", "counter", "Drops out of online, by cause, from the timeline (kept across restarts).",
               facts.drops.map { drops in dropSamples(drops).map { ([("cause", $0.0)], String($0.1)) } } ?? [])
        family("ccrelay_alerts_unread", "gauge", "Alerts not read yet (the badge).", [([], String(facts.alertsUnread))])
        family("ccrelay_outside_access", "gauge",
               "Whether traffic gets out, per address family: 1 for the current verdict (ok, portal, limited, unknown, off), 0 for the others.",
               [("ipv4", facts.outside), ("ipv6", facts.outside6)].flatMap { family, verdict in
                   oneOf(OutsideVerdict.allCases.map(\.rawValue), current: verdict).map { ([("family", family), ("verdict", $0.0)], $0.1) }
               })
        family("ccrelay_forward_queued", "gauge", "Alerts waiting for a [relay] target.",
               facts.forwarding.map { ([("target", $0.target)], String($0.queued)) })
        family("ccrelay_forward_budget_left", "gauge", "Messages a [relay] target's budget still allows in its window.",
               facts.forwarding.compactMap { target in target.budgetLeft.map { ([("target", target.target)], String($0)) } })
        family("ccrelay_certificate_expiry_timestamp_seconds", "gauge", "When the client certificate expires, in seconds since the Unix epoch.",
               seconds(facts.certificateExpiry).map { [([], $0)] } ?? [])
        let account = facts.account
        family("ccrelay_account_devices", "gauge", "Devices logged in with the campus account, as the portal reports it.",
               account?.devices.map { [([], String($0))] } ?? [])
        family("ccrelay_account_used_bytes", "gauge", "Traffic the campus account used, as the portal reports it.",
               account?.usedBytes.map { [([], String($0))] } ?? [])
        family("ccrelay_account_remain_bytes", "gauge", "Traffic left to the campus account, as the portal reports it.",
               account?.remainBytes.map { [([], String($0))] } ?? [])
        return text
    }

    /// A label value escaped as the text format requires (`\\`, `\"`,
    /// `\n`), other control characters as spaces, cut to `labelLimit` characters.
    public static func labelValue(_ value: String) -> String {
        var escaped = ""
        for scalar in String(value.prefix(labelLimit)).unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value): escaped += " "
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// One series per known value, 1 for the current one; a current value
    /// this version does not know (a newer daemon's) is shown too.
    private static func oneOf(_ known: [String], current: String) -> [(String, String)] {
        (known.contains(current) ? known : known + [current]).map { ($0, $0 == current ? "1" : "0") }
    }

    /// Every cause label, those without a drop at 0 (so that a first drop is an increase), then any other.
    private static func dropSamples(_ drops: [String: Int]) -> [(String, Int)] {
        DropCause.allCases.map { ($0.rawValue, drops[$0.rawValue] ?? 0) }
            + drops.filter { DropCause(rawValue: $0.key) == nil }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// Whole seconds (nil for none, or a time no clock shows).
    private static func seconds(_ time: Double?) -> String? {
        guard let time, time.isFinite, abs(time) < 1e15 else { return nil }
        return String(Int64(time.rounded()))
    }
}
