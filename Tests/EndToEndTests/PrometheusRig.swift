import Foundation
import TestSupport

/// Debian's real `prometheus-node-exporter` (the textfile collector alone,
/// on a folder of the test's) and `prometheus` (scraping it every second,
/// evaluating a copy of the shipped rules every second), each on a free
/// loopback port, stopped with the rig. `CCRelayLoggedOut`'s `for:` is
/// shortened in the copy, so that a test sees it fire.
final class PrometheusRig: Sendable {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    static let rules = repository + "/docs/ccrelay.rules.yml"
    static let available = ["/usr/bin/prometheus", "/usr/bin/prometheus-node-exporter", "/usr/bin/promtool"]
        .allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }

    /// The folder the node exporter reads (`--collector.textfile.directory`).
    let textfiles: String
    let folder: String
    let exporterPort: Int
    let prometheusPort: Int
    private let exporter: ChildProcess
    private let prometheus: ChildProcess

    /// `exporterUser`: the account the node exporter runs as (Debian's `prometheus`), root when nil.
    init(exporterUser: String? = nil) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-prometheus-\(UUID().uuidString)").path
        textfiles = folder + "/textfiles"
        try FileManager.default.createDirectory(atPath: textfiles, withIntermediateDirectories: true)
        chmod(folder, 0o755)
        chmod(textfiles, 0o755)
        exporterPort = try Self.freePort()
        prometheusPort = try Self.freePort()
        let exporterCommand = (exporterUser.map { ["/usr/sbin/runuser", "-u", $0, "--"] } ?? []) + [
            "/usr/bin/prometheus-node-exporter", "--web.listen-address=127.0.0.1:\(exporterPort)", "--collector.disable-defaults",
            "--collector.textfile", "--collector.textfile.directory=\(textfiles)",
        ]
        exporter = try ChildProcess(exporterCommand[0], Array(exporterCommand.dropFirst()), outputFiles: (folder + "/exporter.out", folder + "/exporter.log"))
        var rules = try String(contentsOfFile: Self.rules, encoding: .utf8)
        guard let loggedOut = rules.range(of: "for: 5m") else { throw TestSetupError("CCRelayLoggedOut's for: 5m is not in \(Self.rules)") }
        rules.replaceSubrange(loggedOut, with: "for: 2s")
        try rules.write(toFile: folder + "/rules.yml", atomically: true, encoding: .utf8)
        try """
            global:
              scrape_interval: 1s
              evaluation_interval: 1s
            rule_files:
              - \(folder)/rules.yml
            scrape_configs:
              - job_name: node
                static_configs:
                  - targets: ['127.0.0.1:\(exporterPort)']
            """.write(toFile: folder + "/prometheus.yml", atomically: true, encoding: .utf8)
        prometheus = try ChildProcess(
            "/usr/bin/prometheus",
            ["--config.file=\(folder)/prometheus.yml", "--storage.tsdb.path=\(folder)/data", "--web.listen-address=127.0.0.1:\(prometheusPort)"],
            outputFiles: (folder + "/prometheus.out", folder + "/prometheus.log"))
    }

    deinit {
        prometheus.stop()
        exporter.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Waits until both answer.
    func ready() async -> Bool {
        await eventually(timeout: .seconds(60), interval: .milliseconds(200)) {
            get(prometheusPort, "/-/ready")?.contains("Ready") == true && get(exporterPort, "/metrics")?.contains("node_textfile_scrape_error") == true
        }
    }

    var log: String {
        ["exporter.log", "prometheus.log"].map { (try? String(contentsOfFile: folder + "/" + $0, encoding: .utf8)) ?? "" }.joined(separator: "\n")
    }

    /// What the node exporter serves now.
    func exporterMetrics() -> String? { get(exporterPort, "/metrics") }

    /// An instant query through Prometheus' HTTP API: its `data.result` (nil when the query failed).
    func query(_ expression: String) -> [[String: Any]]? {
        guard let answer = api("/api/v1/query", ["query": expression]), answer["status"] as? String == "success" else { return nil }
        return (answer["data"] as? [String: Any])?["result"] as? [[String: Any]]
    }

    /// The value of a query's first series.
    func value(_ expression: String) -> Double? {
        ((query(expression)?.first?["value"] as? [Any])?.last as? String).flatMap(Double.init)
    }

    /// `/api/v1/alerts`: each alert's name and state.
    func alerts() -> [(name: String, state: String)] {
        let alerts = ((api("/api/v1/alerts", [:])?["data"] as? [String: Any])?["alerts"] as? [[String: Any]]) ?? []
        return alerts.map { (($0["labels"] as? [String: Any])?["alertname"] as? String ?? "", $0["state"] as? String ?? "") }
    }

    /// A JSON answer of Prometheus' API (the whole object).
    func api(_ path: String, _ parameters: [String: String]) -> [String: Any]? {
        let arguments = ["-sS", "--noproxy", "*", "-G", "http://127.0.0.1:\(prometheusPort)\(path)"]
            + parameters.flatMap { ["--data-urlencode", "\($0.key)=\($0.value)"] }
        guard let result = try? run("/usr/bin/curl", arguments), result.status == 0 else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8))) as? [String: Any]
    }

    private func get(_ port: Int, _ path: String) -> String? {
        guard let result = try? run("/usr/bin/curl", ["-sS", "--noproxy", "*", "--max-time", "5", "http://127.0.0.1:\(port)\(path)"]),
            result.status == 0
        else { return nil }
        return result.standardOutput
    }

    /// A loopback port nothing listens on now.
    static func freePort() throws -> Int {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw TestSetupError("socket failed") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
        }
        guard bound else { throw TestSetupError("bind failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// `promtool ARGUMENTS` (with `input` on its standard input).
    static func promtool(_ arguments: [String], input: String = "") throws -> CommandResult {
        try run("/usr/bin/promtool", arguments, input: input)
    }
}
