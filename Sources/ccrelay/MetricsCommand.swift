import CCRelayCore
import DesktopServices

/// `ccrelay metrics`: the running daemon's metrics in Prometheus' text
/// format, formatted from its `GetStatus` answer exactly as the daemon
/// writes its `[metrics] textfile` (issue 36).
enum MetricsCommand {
    static let usage = localize("""
        Usage: ccrelay metrics

        Prints the running daemon's state as Prometheus metrics (text format): the
        same text the daemon keeps in its [metrics] textfile for the node exporter's
        textfile collector — ccrelay_info, ccrelay_state, the session's expiry, the
        drops by cause, unread alerts, outside access, the forwarding queues and the
        certificate's expiry. man ccrelay (PROMETHEUS) lists every metric and shows
        how a lab's Prometheus reads them.

        Options:
          -h, --help  show this help

        Exit status: 0 ok, 1 no bus or no answer, 2 usage error,
        3 the daemon is not running.
        """)

    static let command = Subcommand(
        name: "metrics", summary: localize("print the daemon's state as Prometheus metrics"), usage: usage, run: run)

    static func run(_ parsed: ParsedArguments) async -> Int32 {
        guard parsed.positionals.isEmpty else { return usageError("metrics", "unexpected argument '\(parsed.positionals[0])'") }
        let client: ControlClient
        do { client = try await ControlClient.connect() } catch { return error.report("metrics") }
        defer { client.close() }
        do {
            let status = try await client.status()
            // The text ends with its newline; `out` adds one.
            Output.out(String(MetricsText.render(MetricsFacts(status: status)).dropLast()))
            return ExitStatus.ok
        } catch {
            return error.report("metrics")
        }
    }
}
