import AlertJournal
import DBus
import DBusAsync
import DesktopServices
import CCRelayCore
import CoreVocabulary

/// `ccrelay history`: the alert journal, newest first.
enum HistoryCommand {
    /// The kinds the journal holds: every one but the status bubble, which is never journaled.
    static let journaledKinds = AlertKind.allCases.filter { $0 != .status }.map(\.rawValue)

    static let usage = fill(localize("""
        Usage: ccrelay history [--limit N] [--kind KIND] [--json]

        Lists the alerts ccrelay raised, newest first, with the time, the kind, the
        text, and whether you acknowledged them (unread ones are marked with *);
        an alert forwarded off the machine ([relay]) is marked "→ N" (the targets
        it reached; "(M in a digest)" when it went with others in one message),
        one still waiting for a target "→ …".
        Asks the running daemon, or reads the journal on disk when none runs
        ($XDG_STATE_HOME/ccrelay/alerts.db; the newest 1,000 acknowledged alerts
        are kept).

        Options:
          --limit N    show at most N alerts (1-1000, default 20)
          --kind KIND  only alerts of this kind:
                       %s
          --json       print a JSON array of objects with id, kind, title, body,
                       urgency, posted_at, acknowledged, acknowledged_at (ISO 8601,
                       UTC, or null), notification_id (or null), forwarded (the
                       relay targets it reached), forward_waiting and in_digest
                       (the targets it reached inside a digest)
          -h, --help   show this help

        Exit status: 0 ok, 1 the journal cannot be read, 2 usage error.
        """), journaledKinds.joined(separator: " "))

    static let command = Subcommand(
        name: "history", summary: localize("list the alerts raised so far, newest first"), usage: usage, flags: ["json"],
        valued: ["limit", "kind"], values: ["kind": journaledKinds], run: run)

    static func run(_ parsed: ParsedArguments) async -> Int32 {
        guard parsed.positionals.isEmpty else { return unexpectedArgument("history", parsed.positionals[0]) }
        let limitText = parsed.values["limit"] ?? "20"
        guard let limit = Int(limitText), (1...ControlNames.listLimit).contains(limit) else {
            return usageError("history", fill(localize("--limit needs a number from 1 to %s, not '%s'"), "\(ControlNames.listLimit)", limitText))
        }
        var kind: AlertKind?
        if let name = parsed.values["kind"] {
            guard let known = AlertKind(rawValue: name), journaledKinds.contains(name) else {
                return usageError("history", suggesting(fill(localize("unknown kind '%s'"), name), for: name, among: journaledKinds))
            }
            kind = known
        }
        let entries: [JournalEntry]
        do {
            entries = try await read(limit: limit, kind: kind)
        } catch {
            return error.report("history")
        }
        if parsed.has("json") {
            Output.json(entries.map(EntryJSON.init))
        } else if entries.isEmpty {
            Output.out(kind == nil ? localize("No alerts yet.") : fill(localize("No %s alerts."), kind!.rawValue))
        } else {
            entries.forEach { Output.out(describe($0)) }
        }
        return ExitStatus.ok
    }

    private static func read(limit: Int, kind: AlertKind?) async throws(ControlFailure) -> [JournalEntry] {
        try await JournalFile.fromDaemonOrDisk { client throws(ControlFailure) in
            let all = try await client.alerts(limit: UInt32(kind == nil ? limit : ControlNames.listLimit))
            return Array(all.filter { kind == nil || $0.kind == kind }.prefix(limit))
        } disk: { store throws(StoreError) in
            try store.alerts(limit: limit, kind: kind)
        }
    }

    static func describe(_ entry: JournalEntry) -> String {
        let mark = entry.acknowledged ? " " : Style.bold("*")
        let kind = CLI.padded(entry.kind.rawValue, 20)
        let painted = entry.urgency == .critical ? Style.red(kind) : kind
        // Every line of the body on the one line (the server's own sentence is the last of a logout's).
        let lines = entry.body.split(separator: "\n").filter { $0.contains { !$0.isWhitespace } }
        let body = lines.isEmpty ? "" : " — " + Output.printable(lines.joined(separator: " "))
        let forwarded =
            entry.forwardWaiting > 0 ? Style.yellow(" → …")
            : entry.forwarded > 0 ? Style.dim(" → \(entry.forwarded)" + (entry.forwardedInDigest > 0 ? " " + fill(localize("(%s in a digest)"), "\(entry.forwardedInDigest)") : ""))
            : ""
        return "\(Style.dim(TimeText.local(entry.postedAt))) \(mark) \(painted)\(Output.printable(entry.title))\(body)\(forwarded)"
    }

    /// One alert in `--json`.
    struct EntryJSON: Encodable {
        var entry: JournalEntry
        enum Keys: String, CodingKey {
            case id, kind, title, body, urgency, postedAt = "posted_at", acknowledged, acknowledgedAt = "acknowledged_at"
            case notificationID = "notification_id", forwarded, forwardWaiting = "forward_waiting", inDigest = "in_digest"
        }
        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(entry.id, forKey: .id)
            try container.encode(entry.kind.rawValue, forKey: .kind)
            try container.encode(entry.title, forKey: .title)
            try container.encode(entry.body, forKey: .body)
            try container.encode(["low", "normal", "critical"][Int(entry.urgency.rawValue)], forKey: .urgency)
            try container.encode(TimeText.iso8601(entry.postedAt), forKey: .postedAt)
            try container.encode(entry.acknowledged, forKey: .acknowledged)
            try container.encode(entry.acknowledgedAt.map(TimeText.iso8601), forKey: .acknowledgedAt)
            try container.encode(entry.notificationID, forKey: .notificationID)
            try container.encode(entry.forwarded, forKey: .forwarded)
            try container.encode(entry.forwardWaiting, forKey: .forwardWaiting)
            try container.encode(entry.forwardedInDigest, forKey: .inDigest)
        }
    }
}
