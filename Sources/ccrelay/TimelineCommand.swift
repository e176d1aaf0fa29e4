import AlertJournal
import CCRelayCore
import DesktopServices
import EventLoop

/// `ccrelay timeline`: why the session changed, oldest first, and a summary
/// ("online 97.2 % of the last 7 days; 5 drops: …"), read from the journal.
enum TimelineCommand {
    static let usage = localize("""
        Usage: ccrelay timeline [--since DURATION] [--json]

        Lists every change of the session's state and of outside access since
        DURATION ago (default 7d), oldest first, each with its cause — a keep-alive
        that timed out, the server ending the session and why, the network going
        down, sleep, your own command — then a summary: how much of the time the
        session was online, and what ended it each time it dropped. Asks the
        daemon, or reads the journal when none runs ($XDG_STATE_HOME/ccrelay/alerts.db;
        the newest 10,000 changes are kept); the system service's only from it.

        Options:
          --since DURATION  how far back: a number and s, m, h or d (30m, 12h, 7d)
          --json            print an object with entries (at, subject, from, to,
                            cause) and summary (online_share; recorded_seconds,
                            how much of the window the records tell — the share
                            is of that; drops)
          -h, --help        show this help

        Exit status: 0 ok, 1 the journal cannot be read, 2 usage error.
        """)

    static let command = Subcommand(
        name: "timeline", summary: localize("list why the session changed, and how much of the time it was online"), usage: usage,
        flags: ["json"], valued: ["since"], run: run)

    static func run(_ parsed: ParsedArguments) async -> Int32 {
        guard parsed.positionals.isEmpty else { return unexpectedArgument("timeline", parsed.positionals[0]) }
        let sinceText = parsed.values["since"] ?? "7d"
        guard let window = seconds(sinceText) else {
            return usageError("timeline", fill(localize("--since needs a number and s, m, h or d (30m, 12h, 7d), not '%s'"), sinceText))
        }
        let now = WallClock.now()
        let entries: [TimelineEntry]
        do {
            entries = try await JournalFile.fromDaemonOrDisk { client throws(ControlFailure) in
                try await client.timeline(since: now - window)
            } disk: { store throws(StoreError) in
                try store.timeline(since: now - window)
            }
        } catch {
            return error.report("timeline")
        }
        let summary = TimelineSummary(entries, since: now - window, now: now)
        let shown = entries.filter { $0.at >= now - window }
        if parsed.has("json") {
            Output.json(TimelineJSON(entries: shown, summary: summary))
            return ExitStatus.ok
        }
        for entry in shown {
            let what = entry.subject == .outside ? localize("outside") + " " : ""
            Output.out("\(TimeText.local(entry.at))  \(what)\(word(entry.from)) → \(word(entry.to))  \(Output.printable(cause(entry.cause)))")
        }
        Output.out(describe(summary, window: sinceText, seconds: window))
        return ExitStatus.ok
    }

    /// "online 97.2 % of the last 7d; 5 drops: 3 the server ended the session (kicked), …"; of the
    /// time on record when the records are younger than the window `window` (`seconds` long):
    /// "online 70.0 % of the 43 s on record in the last 7d".
    static func describe(_ summary: TimelineSummary, window: String, seconds: Double) -> String {
        guard let share = summary.onlineShare else { return fill(localize("nothing recorded in the last %s"), window) }
        let percent = String(Double(Int(share * 1000)) / 10) + " %"
        // A minute's slack: the records of a window that opened as the daemon started cover all of it.
        var line = summary.recorded + 60 < seconds
            ? fill(localize("online %s of the %s on record in the last %s"), percent, span(summary.recorded), window)
            : fill(localize("online %s of the last %s"), percent, window)
        let total = summary.drops.reduce(0) { $0 + $1.count }
        if total > 0 {
            line += "; " + Localization.localizer.plural("%s drop", "%s drops", count: total) + ": "
                + summary.drops.map { "\($0.count) \(Output.printable(cause($0.cause)))" }.joined(separator: ", ")
        }
        return line
    }

    /// A span of recorded time in the unit that reads best: 43 s, 25 min, 5 h, 3 d.
    static func span(_ seconds: Double) -> String {
        let whole = Int64(seconds.rounded(.down))
        switch whole {
        case ..<120: return fill(localize("%s s"), "\(max(0, whole))")
        case ..<(2 * 3600): return fill(localize("%s min"), "\(whole / 60)")
        case ..<(2 * 86_400): return fill(localize("%s h"), "\(whole / 3600)")
        default: return fill(localize("%s d"), "\(whole / 86_400)")
        }
    }

    /// A recorded state in the user's words (the journal and --json keep the English name).
    static func word(_ state: String) -> String { Output.printable(TimelineText.state(state, localize: Localization.localizer)) }

    /// A recorded cause in the user's words.
    static func cause(_ recorded: String) -> String { TimelineText.cause(recorded, localize: Localization.localizer) }

    /// A duration such as 30m, 12h or 7d, in seconds (at most a year).
    static func seconds(_ text: String) -> Double? {
        guard let unit = text.last, let number = Double(text.dropLast()), number > 0, number.isFinite else { return nil }
        let factor: Double? = ["s": 1, "m": 60, "h": 3600, "d": 86_400][unit]
        guard let factor, number * factor <= 366 * 86_400 else { return nil }
        return number * factor
    }

    struct TimelineJSON: Encodable {
        var entries: [TimelineEntry]
        var summary: TimelineSummary
        enum Keys: String, CodingKey { case entries, summary }
        enum EntryKeys: String, CodingKey { case at, subject, from, to, cause }
        enum SummaryKeys: String, CodingKey { case onlineShare = "online_share", recordedSeconds = "recorded_seconds", drops }
        enum DropKeys: String, CodingKey { case cause, count }

        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            var list = container.nestedUnkeyedContainer(forKey: .entries)
            for entry in entries {
                var item = list.nestedContainer(keyedBy: EntryKeys.self)
                try item.encode(TimeText.iso8601(entry.at), forKey: .at)
                try item.encode(entry.subject.rawValue, forKey: .subject)
                try item.encode(entry.from, forKey: .from)
                try item.encode(entry.to, forKey: .to)
                try item.encode(entry.cause, forKey: .cause)
            }
            var summaryContainer = container.nestedContainer(keyedBy: SummaryKeys.self, forKey: .summary)
            try summaryContainer.encode(summary.onlineShare, forKey: .onlineShare)
            try summaryContainer.encode(summary.recorded.rounded(), forKey: .recordedSeconds)
            var drops = summaryContainer.nestedUnkeyedContainer(forKey: .drops)
            for drop in summary.drops {
                var item = drops.nestedContainer(keyedBy: DropKeys.self)
                try item.encode(drop.cause, forKey: .cause)
                try item.encode(drop.count, forKey: .count)
            }
        }
    }
}
