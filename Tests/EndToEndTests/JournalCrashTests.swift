import AlertJournal
import Foundation
import DesktopServices
import CCRelayCore
import TestSupport
import Testing

/// kill -9 while the daemon is writing the journal: every campus notice ends
/// up recorded exactly once (never lost, never shown twice) and the file is
/// never damaged.
@Suite(.desktopBudget) struct JournalCrashTests {
    @Test func aDaemonKilledWhileRecordingLosesAndRepeatsNothing() async throws {
        let rig = try await DaemonRig()
        #expect(await eventually(timeout: .seconds(20)) { rig.log.contains("state: online") }, "\(rig.log)")
        let store = try AlertStore(path: rig.environment["XDG_STATE_HOME"]! + "/ccrelay/alerts.db") { Issue.record("\($0)") }
        func recorded() -> [String] { ((try? store.alerts(limit: 10_000, kind: .notice)) ?? []).map(\.title) }
        /// The newest notice only: cheap enough to poll every millisecond.
        func newest() -> String? { (try? store.alerts(limit: 1, kind: .notice))?.first?.title }
        var daemon = rig.daemon
        var ids: [String] = []
        var killedMidBatch = 0
        for round in 0..<4 {
            let batch = (0..<200).map { "r\(round)-\($0)" }
            ids += batch
            try rig.sim.control("POST", "notice", batch.map { ["id": $0, "title": $0, "body": "第 \(round) 轮"] })
            // Kill as soon as the first alert of the batch is on disk: the rest are being written.
            #expect(await eventually(timeout: .seconds(20), interval: .milliseconds(1)) { newest()?.hasPrefix("r\(round)-") == true },
                    "\(rig.log)")
            kill(daemon.pid, SIGKILL)
            _ = daemon.wait()
            if recorded().filter({ $0.hasPrefix("r\(round)-") }).count < batch.count { killedMidBatch += 1 }
            daemon = try rig.startDaemon(logPath: rig.logPath + ".\(round)")
        }
        defer { daemon.stop() }
        #expect(await eventually(timeout: .seconds(30)) { recorded().count >= ids.count }, "\(recorded().count) of \(ids.count)")
        let titles = recorded()
        let missing = Set(ids).subtracting(titles)
        #expect(titles.count - Set(titles).count == 0, "notices shown twice: \(titles.count - Set(titles).count)")
        #expect(missing.isEmpty, "notices lost: \(missing.count), e.g. \(missing.prefix(5))")
        #expect(Set(ids).subtracting(store.seenNotices()).isEmpty, "every recorded notice is remembered as seen")
        // Where the kills land depends on the machine's load (on an idle machine most land mid-batch);
        // what must hold wherever they land is checked above and below.
        print("JournalCrashTests: \(killedMidBatch) of 4 kills landed in the middle of a batch")
        let check = try run("/usr/bin/python3", ["-c", "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('pragma integrity_check').fetchone()[0])",
                                                 store.path])
        #expect(check.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "ok")
    }
}
