import CoreVocabulary
@testable import CCRelayCore
import Testing

/// ccrelay's metrics in Prometheus' text format (issue 36): the exact text
/// for a known box, one series per state and verdict, every drop cause from
/// zero, hostile label values escaped and bounded, the account's figures
/// only where the protocol reports them. (`promtool check metrics` reads
/// what the real daemon writes, and this text with hostile values, in EndToEndTests.)
@Suite struct MetricsTextTests {
    static let online = MetricsFacts(
        version: "0.6.0", protocolName: ServerProtocol.cc1.rawValue, instance: "lab", state: "online", stateChanged: 1_700_000_000.4,
        sessionExpires: 1_700_000_180.6, drops: ["kicked": 2], alertsUnread: 3, outside: "ok", outside6: "limited",
        forwarding: [.init(target: "ntfy https://ntfy.sh #1a2b3c", queued: 4, budgetLeft: 7), .init(target: "webhook http://127.0.0.1:9", queued: 0, budgetLeft: nil)],
        certificateExpiry: 1_800_000_000)

    @Test func aBoxOnlineReadsAsALabWantsIt() {
        let text = MetricsText.render(Self.online)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(text.hasSuffix("\n"))
        #expect(lines.contains(#"ccrelay_info{version="0.6.0",protocol="cc1",instance="lab"} 1"#))
        #expect(lines.contains(#"ccrelay_state{state="online",instance="lab"} 1"#))
        #expect(lines.filter { $0.hasPrefix("ccrelay_state{") }.count == DaemonState.allCases.count)
        #expect(lines.filter { $0.hasPrefix("ccrelay_state{") && $0.hasSuffix(" 1") }.count == 1)
        #expect(lines.contains(#"ccrelay_state_changed_timestamp_seconds{instance="lab"} 1700000000"#))
        #expect(lines.contains(#"ccrelay_session_expires_timestamp_seconds{instance="lab"} 1700000181"#))
        #expect(lines.contains(#"ccrelay_drops_total{cause="kicked",instance="lab"} 2"#))
        #expect(lines.contains(#"ccrelay_drops_total{cause="no-network",instance="lab"} 0"#), "a cause without a drop is 0, so that a first drop is an increase")
        #expect(lines.filter { $0.hasPrefix("ccrelay_drops_total{") }.count == DropCause.allCases.count)
        #expect(lines.contains(#"ccrelay_alerts_unread{instance="lab"} 3"#))
        #expect(lines.contains(#"ccrelay_outside_access{family="ipv4",verdict="ok",instance="lab"} 1"#))
        #expect(lines.contains(#"ccrelay_outside_access{family="ipv6",verdict="limited",instance="lab"} 1"#))
        #expect(lines.contains(#"ccrelay_outside_access{family="ipv6",verdict="ok",instance="lab"} 0"#))
        #expect(lines.contains(#"ccrelay_forward_queued{target="ntfy https://ntfy.sh #1a2b3c",instance="lab"} 4"#))
        #expect(lines.contains(#"ccrelay_forward_budget_left{target="ntfy https://ntfy.sh #1a2b3c",instance="lab"} 7"#))
        #expect(!text.contains(#"ccrelay_forward_budget_left{target="webhook"#), "no budget, no series")
        #expect(lines.contains(#"ccrelay_certificate_expiry_timestamp_seconds{instance="lab"} 1800000000"#))
        #expect(!text.contains("ccrelay_account_"), "CC/1 reports no account: nothing is emitted for it")
    }

    @Test func everyFamilyHasItsHelpAndTypeOnceBeforeItsSeries() {
        let lines = MetricsText.render(Self.online).split(separator: "\n").map(String.init)
        var declared: [String: String] = [:]
        for line in lines {
            if line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ")
                #expect(declared[String(parts[2])] == nil, "one TYPE for \(parts[2])")
                declared[String(parts[2])] = String(parts[3])
            } else if !line.hasPrefix("# HELP ") {
                let name = String(line.prefix { $0 != "{" && $0 != " " })
                #expect(declared[name] != nil, "\(name) comes after its TYPE")
            }
        }
        #expect(declared["ccrelay_drops_total"] == "counter")
        #expect(declared.filter { $0.key != "ccrelay_drops_total" }.values.allSatisfy { $0 == "gauge" })
        #expect(lines.filter { $0.hasPrefix("# HELP ") }.count == declared.count)
    }

    @Test func withoutASessionOrACertificateTheirSeriesAreLeftOut() {
        var facts = Self.online
        facts.state = "logged-out"
        facts.sessionExpires = nil
        facts.certificateExpiry = nil
        facts.drops = nil
        facts.forwarding = []
        let text = MetricsText.render(facts)
        #expect(text.contains(#"ccrelay_state{state="logged-out",instance="lab"} 1"#))
        #expect(text.contains(#"ccrelay_state{state="online",instance="lab"} 0"#))
        for absent in ["ccrelay_session_expires", "ccrelay_certificate_expiry", "ccrelay_drops_total", "ccrelay_forward_"] {
            #expect(!text.contains(absent), "\(absent): neither series nor HELP")
        }
    }

    @Test func theAccountIsShownFigureByFigureWhereTheProtocolReportsIt() {
        var facts = Self.online
        facts.account = AccountFacts(devices: 2, usedBytes: 123_456_789_012, remainBytes: nil)
        let text = MetricsText.render(facts)
        #expect(text.contains("ccrelay_account_devices{instance=\"lab\"} 2\n"))
        #expect(text.contains("ccrelay_account_used_bytes{instance=\"lab\"} 123456789012\n"))
        #expect(!text.contains("ccrelay_account_remain_bytes"))
    }

    @Test func hostileLabelValuesAreEscapedAndBounded() {
        #expect(MetricsText.labelValue(#"a\b"c"#) == #"a\\b\"c"#)
        #expect(MetricsText.labelValue("line\nbreak\r\tand\u{7}bell") == #"line\nbreak  and bell"#)
        #expect(MetricsText.labelValue(String(repeating: "界", count: 5000)).count == MetricsText.labelLimit)
        var facts = Self.online
        facts.version = "1\"} 0\nccrelay_state{state=\"online\"} 1"
        facts.forwarding = [.init(target: "x\\\"\n" + String(repeating: "y", count: 9000), queued: 1, budgetLeft: nil)]
        facts.state = "weird\"state"
        let text = MetricsText.render(facts)
        let lines = text.split(separator: "\n")
        #expect(!lines.contains { $0.hasPrefix("ccrelay_state{state=\"online\"}") }, "no series smuggled in")
        #expect(lines.allSatisfy { $0.count < 400 }, "bounded")
        #expect(text.contains(#"ccrelay_state{state="weird\"state",instance="lab"} 1"#), "an unknown state is shown, escaped")
    }

    @Test func theInstanceLabelNamesTheDaemonAndNeverCollides() {
        #expect(MetricsFacts.instance(system: false, name: nil) == "user")
        #expect(MetricsFacts.instance(system: true, name: nil) == "ccrelay")
        #expect(MetricsFacts.instance(system: true, name: "dorm") == "dorm")
    }
}
