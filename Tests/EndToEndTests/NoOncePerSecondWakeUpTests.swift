import Foundation
import Testing

/// On Linux, the first use of Swift concurrency or of a libdispatch global
/// queue starts libdispatch's worker-pool monitor: a timer that wakes the
/// process every second for as long as it lives. The daemon must not use
/// either (bench/idle measures the effect; this keeps the cause out).
@Suite struct NoOncePerSecondWakeUpTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    @Test func theDaemonCodeUsesNeitherSwiftConcurrencyNorGlobalQueues() throws {
        let folders = ["Sources/RelayDaemon", "Sources/ccrelay-daemon"]
        let forbidden = [/\bTask\s*\{/, /\bawait\b/, /\basync\b/, /DispatchQueue\.global/]
        var found: [String] = []
        for folder in folders {
            for file in try FileManager.default.contentsOfDirectory(atPath: Self.repository + "/" + folder) where file.hasSuffix(".swift") {
                let text = try String(contentsOfFile: Self.repository + "/" + folder + "/" + file, encoding: .utf8)
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                    // `queue.async { }` is a serial queue of the daemon's own: allowed.
                    let withoutQueueAsync = code.replacing(/\.async\s*\{/, with: "")
                    if forbidden.contains(where: { withoutQueueAsync.contains($0) }) { found.append("\(folder)/\(file):\(number + 1): \(line)") }
                }
            }
        }
        #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
    }
}
