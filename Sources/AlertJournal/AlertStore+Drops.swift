import CoreVocabulary
import CCRelayCore

extension AlertStore {
    /// How often each timeline cause ended an `online` stretch, over the
    /// timeline kept (its newest `timelineLimit` entries): what
    /// `ccrelay_drops_total` starts from when the daemon starts (`DropTally`).
    public func dropsByCause() throws(StoreError) -> [String: Int] {
        var counts: [String: Int] = [:]
        try database.run(
            "SELECT cause, count(*) FROM timeline WHERE subject = 'state' AND from_value = ? AND to_value != ? GROUP BY cause LIMIT 1000",
            [.text(DaemonState.online.rawValue), .text(DaemonState.online.rawValue)]
        ) { row in counts[row.text(0, limit: 500), default: 0] += Int(row.integer(1)) }
        return counts
    }
}
