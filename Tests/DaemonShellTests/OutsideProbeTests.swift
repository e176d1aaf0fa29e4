import DaemonShell
import EventLoop
import Foundation
import CCRelayCore
import TestSupport
import Testing

/// The outside-access probe (issue 25) against a loopback stand-in for the
/// generate_204 endpoints and for what a campus puts in their way
/// (Tests/Fixtures/probe_server.py), IPv4 and IPv6 apart.
@Suite struct OutsideProbeTests {
    func check(_ urls: [String], timeout: Duration = .seconds(2)) async -> (OutsideReport, Duration) {
        let started = ContinuousClock.now
        let report: OutsideReport = await withCheckedContinuation { continuation in
            TestLoop.shared.execute {
                let probe = OutsideProbe(urls: urls, interface: nil, userAgent: "ccrelay-test", timeout: timeout, loop: TestLoop.shared)
                probe.check { report in withExtendedLifetime(probe) { continuation.resume(returning: report) } }
            }
        }
        return (report, ContinuousClock.now - started)
    }

    @Test(arguments: [
        ("generate_204", OutsideVerdict.ok, ": ok"), ("204-body", .portal, "HTTP 204 with a page"), ("page", .portal, "HTTP 200 with a page"),
        ("redirect", .portal, "redirect (HTTP 302)"), ("status-503", .limited, "status 503"), ("reset", .limited, "reset"),
        ("hang", .limited, "timeout"),
    ])
    func eachAnswerIsClassified(_ path: String, _ verdict: OutsideVerdict, _ said: String) async throws {
        let server = try OutsideProbeServer()
        let (report, took) = await check([server.v4(path)])
        #expect(report.ipv4.verdict == verdict, "\(report.ipv4)")
        #expect(report.ipv4.answers.first?.contains(said) == true, "\(report.ipv4.answers)")
        // The IPv6 pass cannot reach an IPv4 address: it fails, and says why.
        #expect(report.ipv6.verdict == .limited)
        // Each endpoint is given 2 s: a server that never answers (it holds the request 90 s) does not hold the check
        // (60 s of room for a loaded 2-core machine).
        #expect(path != "hang" || took < .seconds(60), "\(took)")
    }

    @Test func theFamiliesAreCheckedApartAndTheFirstDecisiveAnswerWins() async throws {
        let server = try OutsideProbeServer()
        let (report, _) = await check([server.v4("status-503"), server.v6("generate_204"), server.v4("generate_204")])
        #expect(report.ipv4.verdict == .ok && report.ipv4.answers.count == 3, "\(report.ipv4.answers)")
        #expect(report.ipv6.verdict == .ok && report.ipv6.answers.count == 2, "IPv6 stops at [::1]: \(report.ipv6.answers)")
        #expect(report.reachable)
    }

    @Test func aNameThatDoesNotResolveIsDns() async throws {
        let (report, took) = await check(["http://ccrelay-probe.invalid/generate_204"])
        #expect(report.ipv4.answers == ["ccrelay-probe.invalid: dns"] || report.ipv4.answers == ["ccrelay-probe.invalid: timeout"],
                "\(report.ipv4.answers)")
        #expect(report.ipv4.verdict == .limited, "\(took)")
    }
}
