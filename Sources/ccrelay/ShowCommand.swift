import DBus
import DBusAsync
import DesktopServices
import DispatchLoop
import CCRelayCore
import CoreVocabulary
import Dispatch

/// `ccrelay show`: what launching CC Relay does (the menu, the dock): the
/// daemon shows its status bubble, with actions to log in or out and to
/// clear the badge — no terminal needed. The bus starts the daemon when it
/// is installed with its D-Bus service file and not running yet.
enum ShowCommand {
    static let usage = localize("""
        Usage: ccrelay show

        Shows the daemon's status as a notification bubble (the state, the address,
        unread alerts) with actions whose labels say what they do: Log in or Log
        out, Clear N unread. This is what CC Relay's menu entry and dock icon run.
        When no daemon runs and none can be started, a bubble says how to start it.

        Options:
          -h, --help  show this help

        Exit status: 0 shown, 1 no session bus or no notification server to show it,
        3 the daemon is not running.
        """)

    static let command = Subcommand(name: "show", summary: localize("show the status as a notification bubble"), usage: usage, run: run)

    static func run(_ parsed: ParsedArguments) async -> Int32 {
        guard parsed.positionals.isEmpty else { return unexpectedArgument("show", parsed.positionals[0]) }
        let client: ControlClient
        do { client = try await ControlClient.connect() } catch { return error.report("show") }
        defer { client.close() }
        do {
            _ = try await client.call("ShowStatus", timeout: .seconds(30))
            // The bubble waits for a notification server; with none to show it, say so here.
            guard await hasNotificationServer(client.connection) else {
                Output.error(localize("show: no notification server runs in this session, so the bubble waits until one does; ccrelay status prints the same here"))
                return ExitStatus.failure
            }
            return ExitStatus.ok
        } catch .notRunning {
            await tellNotRunning(on: client.connection)
            return ControlFailure.notRunning.report("show")
        } catch {
            return error.report("show")
        }
    }

    /// Whether a notification server owns its name, or the bus can start one.
    private static func hasNotificationServer(_ connection: Connection) async -> Bool {
        if (try? await connection.nameOwner(Notifier.busName)) ?? nil != nil { return true }
        let names = try? await connection.call(.methodCall(
            destination: StandardNames.bus, path: StandardNames.busPath, interface: StandardNames.bus, member: "ListActivatableNames"))
        return ((try? names?.argument(0, as: [String].self)) ?? []).contains(Notifier.busName)
    }

    /// Launched from a menu there is no terminal: the answer is a bubble too.
    private static func tellNotRunning(on connection: Connection) async {
        let alert = Alert(
            kind: .status, title: "CC Relay",
            body: Localization.localize("CC Relay is not running. Start it with: systemctl --user start ccrelay"),
            urgency: .normal, transient: true)
        let notifier = Notifier(connection: connection, log: { _ in })
        let (shown, continuation) = AsyncStream<Bool>.makeStream()
        connection.loop.execute {
            notifier.onEvent = { event in
                switch event {
                case .delivered, .failed: continuation.yield(true)
                default: break
                }
            }
            notifier.start()
            notifier.post(alert)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + 5) { continuation.yield(false) }
        var iterator = shown.makeAsyncIterator()
        _ = await iterator.next()
        connection.loop.sync { notifier.stop() }
    }
}
