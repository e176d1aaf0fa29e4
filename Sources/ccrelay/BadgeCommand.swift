import AlertJournal
import CCRelayCore
import CoreVocabulary
import DBus
import DBusAsync
import DesktopServices

/// `ccrelay badge [show|clear]`: the unread count, from the daemon when it
/// runs, from the journal on disk when it does not.
enum BadgeCommand {
    static let usage = localize("""
        Usage: ccrelay badge [show|clear] [--json]

        The badge is the number of alerts you have not acknowledged yet; the daemon
        shows it on the dock icon. Clicking or dismissing a notification
        acknowledges it; a notification that times out does not.

          show   print the count (the default)
          clear  acknowledge every alert: the count becomes 0 and the dock badge
                 disappears

        Both work without a running daemon, directly on the journal
        ($XDG_STATE_HOME/ccrelay/alerts.db); the daemon announces the new count
        when it starts.

        Options:
          --json      print {"count": N, "urgent": BOOL} (show) or
                      {"cleared": N, "count": 0} (clear)
          -h, --help  show this help

        Exit status: 0 ok, 1 the journal or the daemon failed, 2 usage error.
        """)

    static let command = Subcommand(
        name: "badge", summary: localize("show or clear the count of unread alerts"), usage: usage, flags: ["json"],
        words: ["show", "clear"], run: run)

    struct ShowJSON: Encodable {
        var count: Int
        var urgent: Bool
    }

    struct ClearJSON: Encodable {
        var cleared: Int
        var count: Int
    }

    static func run(_ parsed: ParsedArguments) async -> Int32 {
        let json = parsed.has("json")
        switch parsed.positionals {
        case [], ["show"]:
            let badge: BadgeState
            do {
                badge = try await current()
            } catch {
                return error.report("badge")
            }
            if json {
                Output.json(ShowJSON(count: badge.count, urgent: badge.urgent))
            } else {
                Output.out(Localization.localizer.plural("%s unread alert", "%s unread alerts", count: badge.count))
            }
            return ExitStatus.ok
        case ["clear"]:
            let cleared: Int
            do {
                cleared = try await clear()
            } catch {
                return error.report("badge")
            }
            if json {
                Output.json(ClearJSON(cleared: cleared, count: 0))
            } else {
                Output.out(cleared == 0 ? localize("No unread alerts.")
                    : Localization.localizer.plural("Cleared the badge: %s alert acknowledged.", "Cleared the badge: %s alerts acknowledged.", count: cleared))
            }
            return ExitStatus.ok
        default:
            return usageError("badge", suggesting(localize("expected 'show' or 'clear'"), for: parsed.positionals.first, among: ["show", "clear"]))
        }
    }

    private static func current() async throws(ControlFailure) -> BadgeState {
        try await JournalFile.fromDaemonOrDisk { client throws(ControlFailure) in
            let status = try await client.status()
            return BadgeState(count: Int(status.badge), urgent: status.urgent)
        } disk: { store throws(StoreError) in
            try store.badge()
        }
    }

    private static func clear() async throws(ControlFailure) -> Int {
        try await JournalFile.fromDaemonOrDisk { client throws(ControlFailure) in
            let reply = try await client.call("ClearBadge")
            return Int((try? reply.argument(0, as: UInt32.self)) ?? 0)
        } disk: { store throws(StoreError) in
            try store.acknowledgeAll()
        }
    }
}

/// The journal on disk, for commands that work without the daemon.
enum JournalFile {
    /// Asks the running daemon; when none runs (or there is no session bus),
    /// reads or changes the journal on disk directly — never the system
    /// service's: its journal is in a folder its own account owns, and only
    /// it opens it (root opening it could lock the service out of it).
    static func fromDaemonOrDisk<T>(
        daemon: (ControlClient) async throws(ControlFailure) -> T, disk: (AlertStore) throws(StoreError) -> T
    ) async throws(ControlFailure) -> T {
        if CLI.systemService {
            let client = try await ControlClient.connect()
            defer { client.close() }
            do {
                return try await daemon(client)
            } catch .notRunning {
                let unit = CLI.instance.map { "ccrelay@\($0)" } ?? "ccrelay"
                throw .failed(fill(localize("the system service is not running, and only it reads its journal: sudo systemctl start %s"), unit))
            }
        }
        if let client = try? await ControlClient.connect() {
            defer { client.close() }
            do {
                return try await daemon(client)
            } catch .notRunning {}
        }
        return try open(disk)
    }

    /// The journal: the system service's with `ccrelay --system`, else the user's.
    static var path: String { CLI.systemService ? SystemService.storePath(instance: CLI.instance) : AlertStore.defaultPath() }

    static func open<T>(_ body: (AlertStore) throws(StoreError) -> T) throws(ControlFailure) -> T {
        do {
            let store = try AlertStore(path: path) { Output.error($0) }
            return try body(store)
        } catch {
            throw .failed(fill(localize("cannot use the alert journal %s: %s"), path, "\(error)"))
        }
    }
}
