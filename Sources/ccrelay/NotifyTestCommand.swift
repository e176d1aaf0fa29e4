import DBus
import DBusAsync
import DispatchLoop
import Dispatch
import FoundationEssentials
import DesktopServices
import CCRelayCore
import CoreVocabulary

/// `ccrelay notify-test`: shows one example of each alert kind through the
/// desktop's notification server and reports what the server answered.
enum NotifyTestCommand {
    static let usage = fill(localize("""
        Usage: ccrelay notify-test [KIND...] [--wait SECONDS] [--json]

        Shows one example of every alert ccrelay can raise (or of the KINDs named)
        through the desktop's notification server, in your language, waits for the
        server to answer, and prints what it reported: its name and version, its
        capabilities, and the id it gave each bubble. Use it to check that alerts
        reach you before you rely on them.

        Kinds:
          %s

        Options:
          --wait SECONDS  how long to wait for a notification server to appear
                          and answer (default 10)
          --json          print the report as one JSON object
          -h, --help      show this help

        Exit status: 0 when every bubble was shown, 1 when no notification server
        answered or one refused a bubble, 2 on a usage error.
        """), AlertKind.allCases.map(\.rawValue).joined(separator: " "))

    static let command = Subcommand(
        name: "notify-test", summary: localize("show an example of every alert through the desktop's notifications"), usage: usage,
        flags: ["json"], valued: ["wait"], words: AlertKind.allCases.map(\.rawValue), run: run)

    static func run(_ parsed: ParsedArguments) async -> Int32 {
        var kinds: [AlertKind] = []
        for name in parsed.positionals {
            guard let kind = AlertKind(rawValue: name) else {
                let message = suggesting("notify-test: " + fill(localize("unknown alert kind '%s'"), name), for: name, among: AlertKind.allCases.map(\.rawValue))
                Output.error(message + "\n" + localize("Kinds:") + " " + AlertKind.allCases.map(\.rawValue).joined(separator: " "))
                return ExitStatus.usage
            }
            if !kinds.contains(kind) { kinds.append(kind) }
        }
        if kinds.isEmpty { kinds = AlertKind.allCases }
        let waitText = parsed.values["wait"] ?? "10"
        guard let waitSeconds = Double(waitText), waitSeconds > 0, waitSeconds <= 3600 else {
            Output.error("notify-test: " + fill(localize("--wait needs a number of seconds between 0 and 3600, not '%s'"), waitText))
            return ExitStatus.usage
        }
        let alerts = AlertCatalogue.examples(Localization.localizer).filter { kinds.contains($0.kind) }
            .map { AlertCatalogue.alert(for: $0, localize: Localization.localizer) }

        let connection: Connection
        do {
            connection = try Connection(bus: .session, loop: DispatchScheduler(label: "ccrelay.notify-test"))
        } catch {
            Output.error(fill(localize("cannot connect to the session bus (%s); run this inside your desktop session"), error.message))
            return ExitStatus.failure
        }
        let report = await deliver(alerts, through: connection, waitingUpTo: waitSeconds)
        print(report, json: parsed.has("json"))
        return report.complete ? ExitStatus.ok : ExitStatus.failure
    }

    private enum Step: Sendable {
        case event(Notifier.Event)
        case timeout
    }

    /// What the server answered.
    struct Report: Encodable {
        struct Server: Encodable {
            var name, vendor, version, specification: String
            var capabilities: [String]
        }
        struct Bubble: Encodable {
            var kind: String
            var title: String
            var id: UInt32?
            var error: String?
        }
        var server: Server?
        var alerts: [Bubble]
        var complete: Bool { server != nil && alerts.allSatisfy { $0.id != nil } }
    }

    private static func deliver(_ alerts: [Alert], through connection: Connection, waitingUpTo seconds: Double) async
        -> Report
    {
        let (steps, continuation) = AsyncStream<Step>.makeStream()
        let notifier = Notifier(connection: connection, log: { Output.error($0) })
        connection.loop.execute {
            notifier.onEvent = { continuation.yield(.event($0)) }
            notifier.start()
            alerts.forEach(notifier.post)
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { continuation.yield(.timeout) }
        }
        var server: Notifier.ServerInfo?
        var results: [AlertKind: Result<UInt32, DBusError>] = [:]
        loop: for await step in steps {
            switch step {
            case .event(.serverChanged(let info)): server = info
            case .event(.delivered(let kind, let id)): results[kind] = .success(id)
            case .event(.failed(let kind, let error)): results[kind] = .failure(error)
            case .event: break
            case .timeout: break loop
            }
            if results.count == alerts.count { break }
        }
        continuation.finish()
        connection.loop.sync {
            notifier.stop()
            connection.close()
        }
        return Report(
            server: server.map {
                .init(name: $0.name, vendor: $0.vendor, version: $0.version, specification: $0.specificationVersion,
                      capabilities: $0.capabilities)
            },
            alerts: alerts.map { alert in
                switch results[alert.kind] {
                case .success(let id)?: .init(kind: alert.kind.rawValue, title: alert.title, id: id)
                case .failure(let error)?: .init(kind: alert.kind.rawValue, title: alert.title, error: error.description)
                case nil: .init(kind: alert.kind.rawValue, title: alert.title, error: "no answer")
                }
            })
    }

    private static func print(_ report: Report, json: Bool) {
        if json {
            Output.json(report)
            return
        }
        guard let server = report.server else {
            Output.error(localize("no notification server answered on the session bus; start one (for example dunst, or your desktop's) and try again"))
            return
        }
        Output.out("notification server: \(server.name) \(server.version) (\(server.vendor)), specification \(server.specification)")
        Output.out("capabilities: \(server.capabilities.joined(separator: " "))")
        let width = report.alerts.map(\.kind.count).max() ?? 0
        for bubble in report.alerts {
            let padded = bubble.kind + String(repeating: " ", count: width - bubble.kind.count)
            if let id = bubble.id {
                Output.out("\(padded)  \(id == 0 ? "shown, no id" : "id \(id)")  \(bubble.title)")
            } else {
                Output.out("\(padded)  not shown: \(bubble.error ?? "")")
            }
        }
    }
}
