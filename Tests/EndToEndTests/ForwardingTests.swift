import Foundation
import TestSupport
import Testing

/// Forwarding off the machine, end to end: the real daemon, ccsim, and
/// loopback ntfy, gotify and webhook servers (Tests/Fixtures/relay_recorder.py)
/// that record what they receive.
@Suite(.desktopBudget) struct ForwardingTests {
    func status(_ rig: DaemonRig) throws -> [String: Any] {
        let result = try rig.cli(["status", "--json"])
        return (try? JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]) ?? [:]
    }

    func relays(_ rig: DaemonRig) throws -> [[String: Any]] { (try status(rig)["relay"] as? [[String: Any]]) ?? [] }

    @Test func aKickReachesNtfyWithUrgentPriorityAndGotifyWithEightAndNothingSecretLeaves() async throws {
        let ntfy = try RelayRecorder(.ntfy, tls: true)
        let gotify = try RelayRecorder(.gotify, token: "AppToken1")
        let rig = try await DaemonRig(extraConfig: """
            [relay]
            ntfy = https://127.0.0.1:\(ntfy.port)/ccrelay-20231234
            gotify = http://127.0.0.1:\(gotify.port)/message?token=AppToken1
            ca-file = \(TestPKI.shared.caCertificate)
            """)
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        let token = try #require(try rig.sim.sessions().first?["session"] as? String)
        try rig.sim.control("POST", "kick", ["message": "你已被管理员下线"])
        #expect(await eventually(timeout: .seconds(20)) { !ntfy.requests().isEmpty && !gotify.requests().isEmpty }, "\(rig.log)")

        let published = RelayRecorder.body(ntfy.requests()[0])
        #expect(ntfy.requests()[0]["path"] as? String == "/")
        #expect(published["topic"] as? String == "ccrelay-20231234")
        #expect(published["title"] as? String == "Logged out of the campus network")
        #expect((published["message"] as? String)?.contains("你已被管理员下线") == true)
        #expect(published["priority"] as? Int == 5, "critical is ntfy's urgent")
        let message = RelayRecorder.body(gotify.requests()[0])
        #expect(gotify.requests()[0]["query"] as? String == "token=AppToken1")
        #expect(message["title"] as? String == "Logged out of the campus network")
        #expect(message["priority"] as? Int == 8)

        #expect(await eventually { (try? relays(rig))?.allSatisfy { $0["last_delivered"] is String } == true }, "\((try? relays(rig)) ?? [])")
        let shown = try relays(rig)
        // The server and a fingerprint of the topic or token (issue 31.8).
        #expect(shown.map { ($0["target"] as? String)?.split(separator: "#").first.map(String.init) } == [
            "ntfy https://127.0.0.1:\(ntfy.port) ", "gotify http://127.0.0.1:\(gotify.port) ",
        ])
        #expect(shown.allSatisfy { $0["queued"] as? Int == 0 })
        #expect(!(try rig.cli(["status"]).standardOutput.contains("AppToken1")), "the status never shows a target's secret")
        let history = try rig.cli(["history", "--json", "--limit", "1"]).standardOutput
        let newest = try #require((try JSONSerialization.jsonObject(with: Data(history.utf8)) as? [[String: Any]])?.first)
        #expect(newest["kind"] as? String == "logged-out" && newest["forwarded"] as? Int == 2, "\(newest)")

        // Nothing secret in any request: the session token, the client key, the certificate.
        let keyLines = try String(contentsOfFile: TestPKI.shared.clientKey, encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("-") }
        let certificateLines = try String(contentsOfFile: TestPKI.shared.clientCertificate, encoding: .utf8).split(separator: "\n")
            .filter { !$0.hasPrefix("-") }
        for received in [ntfy.everythingReceived(), gotify.everythingReceived()] {
            #expect(!received.contains(token))
            #expect(!(keyLines + certificateLines).contains { received.contains($0) })
            #expect(!received.contains("PRIVATE KEY") && !received.contains("CC-Session"))
        }
    }

    /// issue 26: quiet hours hold a notice (no bubble, not forwarded) but
    /// not a logout; the status says why and what is left of the budget.
    @Test func quietHoursHoldANoticeButNotALogoutAndTheStatusSaysWhy() async throws {
        let ntfy = try RelayRecorder(.ntfy)
        // Quiet all day, whatever the clock says when the test runs.
        let rig = try await DaemonRig(extraConfig: """
            [alerts]
            quiet = 00:00-12:00, 12:00-00:00
            [relay]
            forward = ntfy://127.0.0.1:\(ntfy.port)/ccrelay-quiet?limit=5/day
            kinds = logged-out, notice
            """)
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        try rig.sim.control("POST", "notice", ["id": "n-quiet", "title": "停电通知", "body": "今晚维护", "urgency": "normal"])
        #expect(await eventually(timeout: .seconds(20)) { (try? relays(rig).first?["held"] as? String) == "quiet-hours" }, "\(rig.log)")
        let shown = try rig.shown()
        #expect(ntfy.requests().isEmpty && !shown.contains("x-ccrelay.notice"), "neither forwarded nor popped up: \(shown)")
        try rig.sim.control("POST", "kick", ["message": "你已被管理员下线"])
        #expect(await eventually(timeout: .seconds(20)) { ntfy.requests().count == 1 }, "\(rig.log)")
        #expect(RelayRecorder.body(ntfy.requests()[0])["title"] as? String == "Logged out of the campus network")
        #expect(await eventually { (try? relays(rig).first?["budget_left"] as? Int) == 4 }, "\((try? relays(rig)) ?? [])")
        #expect(try relays(rig).first?["queued"] as? Int == 1, "the notice waits for the quiet's end")
        #expect(try rig.shown().contains("network.disconnected"), "a logout still pops up")
    }

    @Test func aTargetThatIsDownGetsTheAlertOnceWhenTheSessionIsBackMarkedLate() async throws {
        let port = Int(try freeLoopbackPort())
        let rig = try await DaemonRig(extraConfig: """
            [relay]
            ntfy = http://127.0.0.1:\(port)/ccrelay-20231234
            """)
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        try rig.sim.control("POST", "kick")
        #expect(await eventually(timeout: .seconds(20)) {
            (try? relays(rig))?.first.map { $0["queued"] as? Int == 1 && ($0["last_error"] as? String)?.contains("onnect") == true } == true
        }, "\((try? relays(rig)) ?? [])")
        #expect(rig.log.contains("cannot forward alerts to ntfy http://127.0.0.1:\(port) #") && !rig.log.contains("ccrelay-20231234"), "\(rig.log)")
        // The target comes back; then so does the campus session, which flushes the outbox.
        let ntfy = try RelayRecorder(.ntfy, port: port)
        let started = ContinuousClock.now
        _ = try rig.cli(["login"])
        #expect(await eventually(timeout: .seconds(20)) { !ntfy.requests().isEmpty }, "\(rig.log)")
        let delay = ContinuousClock.now - started
        let message = RelayRecorder.body(ntfy.requests()[0])["message"] as? String ?? ""
        #expect(message.contains("Delayed: raised at"), "\(message)")
        // Once, never again: ForwardingShellTests.aDeliveredAlertIsNeverSentAgain, on the virtual clock.
        // After the logout comes back online (issue 33.3: a phone that heard of the trouble hears it is over).
        #expect(await eventually { ntfy.requests().count == 2 && (try? relays(rig))?.first?["queued"] as? Int == 0 }, "\(ntfy.requests())")
        #expect((RelayRecorder.body(ntfy.requests()[1])["title"] as? String) == "Back online", "\(ntfy.requests())")
        print("forwarding: delivered \(delay) after the login that brought the session back")
    }

    @Test func killDashNineDuringDeliveryDeliversOnceAfterTheRestartWithTheSameKey() async throws {
        let hook = try RelayRecorder(.webhook, hangFirst: 1)
        let rig = try await DaemonRig(extraConfig: """
            [relay]
            webhook = http://127.0.0.1:\(hook.port)/ccrelay
            """)
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        try rig.sim.control("POST", "kick")
        #expect(await eventually(timeout: .seconds(20)) { hook.requests().count == 1 }, "\(rig.log)")
        rig.daemon.stop(signal: SIGKILL)
        _ = rig.daemon.wait()
        let again = try rig.startDaemon(logPath: rig.logPath + ".2")
        defer { again.stop() }
        #expect(await eventually(timeout: .seconds(20)) { hook.requests().count == 2 }, "\(rig.log)")
        let (first, second) = (hook.requests()[0], hook.requests()[1])
        let key = try #require(RelayRecorder.header(first, "Idempotency-Key"))
        #expect(key.count == 32)
        #expect(RelayRecorder.header(second, "Idempotency-Key") == key, "the same key: the target can drop a repeat")
        #expect(RelayRecorder.body(second)["id"] as? String == key)
        #expect(RelayRecorder.body(second)["late"] as? Bool == true, "cut short by the crash, so late")
        #expect(RelayRecorder.body(second)["kind"] as? String == "logged-out")
        #expect(second["answered"] as? Bool == true)
        // Never again after this: ForwardingShellTests.aDeliveredAlertIsNeverSentAgain, on the virtual clock.
        #expect(hook.requests().count == 2, "\(hook.requests().map { $0["body"] ?? "" }) \(rig.log)")
    }

    @Test func aHangingTargetDoesNotDelayKeepAlives() async throws {
        let ntfy = try RelayRecorder(.ntfy, hangFirst: 1000)
        let rig = try await DaemonRig(extraConfig: """
            [relay]
            ntfy = http://127.0.0.1:\(ntfy.port)/ccrelay-20231234
            """)
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        try rig.sim.control("POST", "kick")
        #expect(await eventually(timeout: .seconds(20)) { ntfy.requests().count == 1 }, "\(rig.log)")
        _ = try rig.cli(["login"])
        // The relay request hangs (its own 30 s limit); the new session's keep-alives go on every 2 s.
        #expect(await eventually(timeout: .seconds(40)) {
            ((try? rig.sim.sessions()) ?? []).count == 2 && ((try? rig.sim.sessions().last?["reports"] as? [[String: Any]])??.count ?? 0) >= 5
        }, "\(rig.log)")
        let reports = try #require(try rig.sim.sessions().last?["reports"] as? [[String: Any]])
        let times = reports.compactMap { $0["at"] as? Double }
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        #expect(reports.allSatisfy { $0["accepted"] as? Bool == true })
        // Held up, a gap would be the relay's 30 s; 15 s leaves a loaded 2-core machine room.
        #expect(gaps.allSatisfy { $0 < 15 }, "keep-alives every 2 s, never held up by the relay: \(gaps)")
        #expect(try status(rig)["state"] as? String == "online")
        #expect(ntfy.requests().count == 1, "the relay is still on its first request")
        print("forwarding: keep-alive gaps with a hanging relay target: \(gaps.map { String(format: "%.2f", $0) })")
    }
}
