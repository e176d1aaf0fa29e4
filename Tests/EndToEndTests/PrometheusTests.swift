import CCRelayCore
import Foundation
import TestSupport
import Testing

/// ccrelay's state as Prometheus metrics (issue 36) with the real parts a
/// lab runs: the daemon (the user daemon, and the system service as its
/// own user) writes its `[metrics] textfile`; Debian's node exporter serves
/// it; Debian's Prometheus scrapes it every second and evaluates the shipped
/// rules; `promtool` checks the text, the rules and their unit tests; the
/// dashboard's queries run in Prometheus. Everything on loopback, stopped at the end.
@Suite(.serialized, .desktopBudget, .enabled(if: PrometheusRig.available, "needs prometheus, prometheus-node-exporter (scripts/bootstrap)"))
struct PrometheusTests {
    /// Every metric name the issue names; nothing else is emitted or asked for.
    static let metricNames: Set<String> = [
        "ccrelay_info", "ccrelay_state", "ccrelay_session_expires_timestamp_seconds", "ccrelay_state_changed_timestamp_seconds",
        "ccrelay_drops_total", "ccrelay_alerts_unread", "ccrelay_outside_access", "ccrelay_forward_queued", "ccrelay_forward_budget_left",
        "ccrelay_certificate_expiry_timestamp_seconds", "ccrelay_account_devices", "ccrelay_account_used_bytes", "ccrelay_account_remain_bytes",
    ]

    @Test func aLabsPrometheusSeesTheBoxOnlineThenLoggedOutWithItsDropAndTheAlertFires() async throws {
        let prometheus = try PrometheusRig()
        let textfile = prometheus.textfiles + "/ccrelay.prom"
        let webhook = try RelayRecorder(.webhook)
        let rig = try await DaemonRig(extraConfig: "[relay]\nwebhook = http://127.0.0.1:\(webhook.port)/hook\n[metrics]\ntextfile = \(textfile)")
        #expect(await prometheus.ready(), "\(prometheus.log)")
        #expect(await eventually(timeout: .seconds(30)) { prometheus.query(#"ccrelay_state{state="online"} == 1"#)?.count == 1 },
                "\(rig.log)\n\(prometheus.log)")
        // The box is Prometheus' instance; ccrelay's own label arrives as exported_instance.
        #expect(prometheus.query(#"ccrelay_info{job="node",exported_instance="user",protocol="cc1"}"#)?.count == 1)
        #expect(prometheus.query("ccrelay_certificate_expiry_timestamp_seconds > time() + 86400")?.count == 1)
        #expect(prometheus.query(#"ccrelay_forward_queued{target=~"webhook http://127.0.0.1:.*"}"#)?.count == 1, "the target by its display name")
        let before = try #require(prometheus.value("sum(ccrelay_drops_total)"))
        let file = try String(contentsOfFile: textfile, encoding: .utf8)
        let checked = try PrometheusRig.promtool(["check", "metrics"], input: file)
        #expect(checked.status == 0, "promtool check metrics: \(checked.standardOutput)\(checked.standardError)\n\(file)")
        for line in file.split(separator: "\n") where !line.hasPrefix("#") {
            #expect(Self.metricNames.contains(String(line.prefix { $0 != "{" && $0 != " " })), "\(line)")
        }

        // A kick: logged out, a drop more, and the shipped rule fires (its for: shortened in the test's copy).
        try rig.sim.control("POST", "kick", ["message": "下线"])
        #expect(await eventually(timeout: .seconds(30)) { prometheus.query(#"ccrelay_state{state="logged-out"} == 1"#)?.count == 1 },
                "\(rig.log)")
        #expect(await eventually(timeout: .seconds(10)) { (prometheus.value("sum(ccrelay_drops_total)") ?? 0) > before })
        #expect(prometheus.value(#"ccrelay_drops_total{cause="kicked"}"#) == 1)
        #expect(prometheus.query(#"ccrelay_state{state="online"} == 1"#)?.isEmpty == true)
        #expect(await eventually(timeout: .seconds(30)) { prometheus.alerts().contains { $0 == ("CCRelayLoggedOut", "firing") } },
                "\(prometheus.alerts())")

        // `ccrelay metrics` prints what the file holds (the session's expiry aside: it is written at most once a minute).
        let printed = try rig.cli(["metrics"])
        #expect(printed.status == 0, "\(printed.standardError)")
        let written = try String(contentsOfFile: textfile, encoding: .utf8)
        #expect(printed.standardOutput == written, "no session now, so nothing may differ")
        #expect(written.contains(#"ccrelay_state{state="logged-out",instance="user"} 1"#))

        // The dashboard's queries use only these metrics, and each runs in Prometheus.
        for query in try Self.dashboardQueries() {
            let names = Set(query.matches(of: /ccrelay_[a-z_]+/).map { String($0.output) })
            #expect(!names.isEmpty && names.isSubset(of: Self.metricNames), "\(query)")
            let asked = query.replacingOccurrences(of: "$box", with: ".+")
            #expect(prometheus.api("/api/v1/query", ["query": asked])?["status"] as? String == "success", "\(asked)")
        }
        #expect(prometheus.query(#"sum by (cause) (increase(ccrelay_drops_total{instance=~".+"}[1d]))"#)?.isEmpty == false)
        // The rules loaded, each healthy.
        let groups = ((prometheus.api("/api/v1/rules", [:])?["data"] as? [String: Any])?["groups"] as? [[String: Any]]) ?? []
        let rules = groups.flatMap { ($0["rules"] as? [[String: Any]]) ?? [] }
        #expect(rules.count == 5 && rules.allSatisfy { $0["health"] as? String == "ok" }, "\(rules)")
    }

    /// The expressions of the shipped Grafana dashboard (panels and variables).
    static func dashboardQueries() throws -> [String] {
        let data = try Data(contentsOf: URL(fileURLWithPath: PrometheusRig.repository + "/docs/ccrelay-dashboard.json"))
        let dashboard = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let panels = try #require(dashboard["panels"] as? [[String: Any]])
        let queries = panels.flatMap { ($0["targets"] as? [[String: Any]] ?? []).compactMap { $0["expr"] as? String } }
        #expect(queries.count >= panels.count, "every panel asks something")
        return queries
    }

    @Test func metricsHasItsHelpAndSaysWhenNoDaemonRuns() throws {
        let help = try run(DaemonRig.ccrelay, ["metrics", "--help"], environment: ["LANG": "C.UTF-8"])
        #expect(help.status == 0 && help.standardOutput.hasPrefix("Usage: ccrelay metrics"), "\(help.standardOutput)")
        #expect(try run(DaemonRig.ccrelay, ["metrics", "now"]).status == 2)
        let bus = try PrivateBus()
        var environment = bus.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=/nonexistent/ccrelay-no-system-bus"
        let none = try run(DaemonRig.ccrelay, ["metrics"], environment: environment)
        #expect(none.status == 3 && none.standardOutput.isEmpty && none.standardError.contains("not running"), "\(none.standardError)")
    }

    @Test func theShippedRulesCheckAndPassTheirUnitTests() throws {
        let check = try PrometheusRig.promtool(["check", "rules", PrometheusRig.rules])
        #expect(check.status == 0 && check.standardOutput.contains("SUCCESS: 5 rules found"), "\(check.standardOutput)\(check.standardError)")
        let test = try PrometheusRig.promtool(["test", "rules", PrometheusRig.repository + "/Tests/Prometheus/ccrelay.rules.test.yml"])
        #expect(test.status == 0 && test.standardOutput.contains("SUCCESS"), "\(test.standardOutput)\(test.standardError)")
    }

    @Test func hostileLabelValuesStillMakeValidMetrics() throws {
        let hostile = "a\\b\"c\nccrelay_state{state=\"online\"} 1\u{1B}[31m" + String(repeating: "界", count: 500)
        let facts = MetricsFacts(
            version: hostile, protocolName: hostile, instance: hostile, state: hostile, drops: [hostile: 3], alertsUnread: 1,
            outside: hostile, outside6: "ok", forwarding: [.init(target: hostile, queued: 2, budgetLeft: 1)],
            account: AccountFacts(devices: 1, usedBytes: Int64.max, remainBytes: 0))
        let text = MetricsText.render(facts)
        let checked = try PrometheusRig.promtool(["check", "metrics"], input: text)
        #expect(checked.status == 0, "\(checked.standardOutput)\(checked.standardError)\n\(text)")
        #expect(!text.split(separator: "\n").contains { $0.hasPrefix("ccrelay_state{state=\"online\"}") })
    }
}

