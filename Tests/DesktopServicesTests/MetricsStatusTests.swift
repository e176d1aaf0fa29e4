import CCRelayCore
import DBus
import DesktopServices
import Testing

/// `GetStatus`' `metrics` entry and what `ccrelay metrics` makes of a whole
/// answer (issue 36): the protocol and the account's figures come from the
/// rest of the status (a Srun portal reports them), the rest from `metrics`;
/// a hostile daemon's answer is bounded; an older daemon's (no entry) leaves its parts out.
@Suite struct MetricsStatusTests {
    static func status() -> DaemonStatus {
        var status = DaemonStatus(state: "online", badge: 2, urgent: false, remaining: 100, ip: "10.1.2.3", server: "http://10.0.0.1/",
                                  lastError: "", interval: 60, timeout: 180, location: "off", version: "0.3.0")
        status.serverProtocol = "srun"
        status.account = AccountFacts(devices: 2, deviceList: [.init(kind: "Android", address: "10.20.x.x")], usedBytes: 5_000_000_000,
                                      remainBytes: 7_000_000_000, onlineIP: "10.20.x.x")
        status.metrics = MetricsStatus(instance: "dorm", stateChanged: 1_800_000_000, sessionExpires: 1_800_000_180, certificateExpiry: nil,
                                       drops: ["kicked": 4, "no-network": 1], textfile: "/var/lib/prometheus/node-exporter/ccrelay-dorm.prom")
        return status
    }

    @Test func aSrunBoxShowsItsProtocolAndAccountAndNothingElseOfIt() {
        let read = DaemonStatus(dictionary: Self.status().dictionary)
        #expect(read.metrics == Self.status().metrics)
        let text = MetricsText.render(MetricsFacts(status: read))
        #expect(text.contains(#"ccrelay_info{version="0.3.0",protocol="srun",instance="dorm"} 1"#))
        #expect(text.contains(#"ccrelay_account_devices{instance="dorm"} 2"#))
        #expect(text.contains(#"ccrelay_account_used_bytes{instance="dorm"} 5000000000"#))
        #expect(text.contains(#"ccrelay_account_remain_bytes{instance="dorm"} 7000000000"#))
        #expect(text.contains(#"ccrelay_drops_total{cause="kicked",instance="dorm"} 4"#))
        #expect(text.contains(#"ccrelay_alerts_unread{instance="dorm"} 2"#))
        for secret in ["10.20", "10.1.2.3", "10.0.0.1", "Android"] { #expect(!text.contains(secret), "\(secret) is in no label") }
    }

    @Test func anOlderDaemonsAnswerLeavesItsPartsOutAndAHostileOneIsBounded() {
        var plain = Self.status()
        plain.metrics = nil
        plain.account = nil
        let text = MetricsText.render(MetricsFacts(status: DaemonStatus(dictionary: plain.dictionary)))
        #expect(!text.contains("ccrelay_drops_total") && !text.contains("ccrelay_state_changed") && !text.contains("ccrelay_account_"))
        var hostile = Self.status().dictionary
        hostile["metrics"] = Variant([
            "instance": Variant(String(repeating: "x", count: 10_000)),
            "drops": Variant(Dictionary(uniqueKeysWithValues: (0..<5000).map { ("cause-\($0)-" + String(repeating: "y", count: 100), UInt32($0)) })),
            "state_changed": Variant(Double.nan),
        ] as [String: Variant])
        let read = DaemonStatus(dictionary: hostile)
        #expect(read.metrics?.instance.count == 64)
        #expect(read.metrics?.drops?.count == 64 && read.metrics?.drops?.keys.allSatisfy { $0.count <= 32 } == true)
        #expect(read.metrics?.stateChanged == nil)
    }
}
