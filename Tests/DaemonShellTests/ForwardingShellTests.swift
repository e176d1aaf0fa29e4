@testable import CCProtocol
@testable import DaemonShell
import DesktopServices
import EventLoop
import Foundation
import CCRelayCore
import Testing
import TestSupport
import Forwarding
import ForwardingTransport

/// Forwarding in the daemon shell: what goes into the outbox, when each
/// target is tried, back-off and the flush when the campus session returns,
/// late marks, and a target that never answers holding nothing else up —
/// carried out; the lanes' rules themselves are ForwarderTests' (Forwarding).
@Suite(.desktopBudget) struct ForwardingShellTests {
    static let relayConfig = """
        [relay]
        ntfy = https://ntfy.campus.example/ccrelay-20231234
        gotify = https://gotify.campus.example/message?token=AbC
        """

    /// A harness whose session was logged in and then kicked by the server.
    func kicked() throws -> DaemonHarness {
        let rig = try DaemonHarness(config: Self.relayConfig + "\n[keepalive]\nauto-relogin = false")
        rig.server.answer(ScriptedServer.loggedIn(interval: 60, timeout: 180))
        rig.loop.advance(by: .seconds(60))
        rig.server.answer(.loggedOut(reason: "kicked", message: "你已被管理员下线"))
        rig.loop.runPending()
        return rig
    }

    func body(_ request: ForwardRequest?) throws -> [String: Any] {
        let request = try #require(request)
        return try #require(JSONSerialization.jsonObject(with: Data(request.body.utf8)) as? [String: Any])
    }

    @Test func aKickGoesToEveryTargetAtOnceWithItsPriority() throws {
        let rig = try kicked()
        #expect(rig.desktop.posted.map(\.kind) == [.loggedOut])
        let ntfy = try body(rig.relay["ntfy"].requests.first)
        #expect(ntfy["priority"] as? Int == 5)
        #expect((ntfy["message"] as? String)?.contains("你已被管理员下线") == true)
        #expect(try body(rig.relay["gotify"].requests.first)["priority"] as? Int == 8)
        rig.relay["ntfy"].answer()
        rig.relay["gotify"].answer()
        let entry = try #require(try rig.store().alerts(limit: 1).first)
        #expect(entry.kind == .loggedOut && entry.forwarded == 2 && entry.forwardWaiting == 0)
        let relays = rig.daemon.status().relays
        #expect(relays.map(\.queued) == [0, 0])
        #expect(relays.allSatisfy { $0.lastDelivered != nil && $0.lastError.isEmpty })
        // The server and a fingerprint of the topic or token (issue 31.8).
        #expect(relays.map { $0.target.split(separator: "#").first.map(String.init) } == ["ntfy https://ntfy.campus.example ", "gotify https://gotify.campus.example "])
        #expect(relays.allSatisfy { !$0.target.contains("ccrelay-20231234") && !$0.target.contains("AbC") && $0.target.count > 20 })
    }

    /// "Delivered once, never again" on the virtual clock (what end-to-end
    /// tests once slept three seconds for): a day later, after a flush (the
    /// network back, a resume) and a restart, the delivered alert is not sent again.
    @Test func aDeliveredAlertIsNeverSentAgain() throws {
        let rig = try kicked()
        rig.relay["ntfy"].answer()
        rig.relay["gotify"].answer()
        rig.loop.advance(by: .seconds(86_400))
        rig.system.onEvent?(.network(online: true, why: "test"))
        rig.loop.runPending()
        rig.loop.advance(by: .seconds(3600))
        #expect(rig.relay["ntfy"].requests.count == 1 && rig.relay["gotify"].requests.count == 1, "once each")
        let config = ConfigurationParser.parse(
            "[server]\nurl = https://cc.campus.example/\n" + Self.relayConfig, file: rig.folder + "/ccrelay.conf", home: rig.folder, localize: .english).configuration!
        let relay = ScriptedRelay()
        let again = Daemon(
            reading: .usable(config), configurationPath: rig.folder + "/ccrelay.conf", version: "test", loop: rig.loop,
            campus: CCCampusClient(ScriptedServer()), desktop: RecordingDesktop(), systemWatch: { _ in nil },
            forwardTransport: { relay.lane(for: $0) }, storePath: rig.folder + "/alerts.db", log: { _ in })
        again.start { _ in }
        rig.loop.advance(by: .seconds(3600))
        #expect(relay.lanes.allSatisfy { $0.requests.isEmpty }, "nor after a restart")
    }

    @Test func onlyTheSelectedKindsAreForwarded() throws {
        let rig = try DaemonHarness(config: Self.relayConfig)
        let notices = [Notice(id: "n-1", title: "停电", body: "今晚", urgency: "critical"),
                       Notice(id: "n-2", title: "讲座", body: "明天", urgency: "normal")]
        rig.server.answer(ScriptedServer.loggedIn(notices: notices))
        rig.loop.runPending()
        #expect(rig.relay["ntfy"].requests.count == 1, "the critical notice only")
        #expect(try body(rig.relay["ntfy"].requests.first)["title"] as? String == "停电")
        rig.relay["ntfy"].answer()
        #expect(rig.relay["ntfy"].requests.count == 1, "nothing else waits")
    }

    @Test func aTargetThatFailsIsRetriedWithBackOffAndTheMessageIsMarkedLate() throws {
        let rig = try kicked()
        let ntfy = rig.relay["ntfy"]
        ntfy.answer(failure: "Could not resolve host: ntfy.campus.example")
        rig.relay["gotify"].answer()
        #expect(rig.daemon.status().relays.first?.queued == 1)
        #expect(rig.daemon.status().relays.first?.lastError.contains("resolve") == true)
        rig.loop.advance(by: .seconds(4))
        #expect(ntfy.requests.count == 1, "not before the back-off")
        rig.loop.advance(by: .seconds(1))
        #expect(ntfy.requests.count == 2, "5 s after the first failure")
        ntfy.answer(failure: "Could not resolve host: ntfy.campus.example")
        rig.loop.advance(by: .seconds(9))
        #expect(ntfy.requests.count == 2)
        rig.loop.advance(by: .seconds(1))
        #expect(ntfy.requests.count == 3, "10 s after the second")
        let late = try body(ntfy.requests.last)["message"] as? String
        #expect(late?.contains("Delayed: raised at") == true, "\(late ?? "")")
        #expect((try body(rig.relay["gotify"].requests.first)["message"] as? String)?.contains("Delayed") == false, "on time: not late")
        let logged = rig.logged.filter { $0.contains("cannot forward alerts to ntfy") }
        #expect(logged.count == 1, "said once per episode: \(rig.logged)")
        #expect(!rig.logged.joined().contains("ccrelay-20231234?"), "no URL secrets in the log")
        ntfy.answer()
        #expect(rig.daemon.status().relays.first?.queued == 0)
        #expect(rig.logged.contains { $0.contains("forwarding to ntfy") && $0.contains("works again") })
        #expect(ntfy.requests.count == 3, "delivered once")
    }

    @Test func theSessionComingBackFlushesTheOutboxAtOnce() throws {
        let rig = try kicked()
        // Outside access went with the session: the internet target fails.
        rig.relay["ntfy"].answer(failure: "Failed to connect to ntfy.campus.example port 443")
        rig.relay["gotify"].answer(failure: "Failed to connect to gotify.campus.example port 443")
        rig.loop.advance(by: .seconds(5))
        rig.relay["ntfy"].answer(failure: "Failed to connect")
        rig.relay["gotify"].answer(failure: "Failed to connect")
        // Now 10 s of back-off; the student logs in again after 2.
        rig.loop.advance(by: .seconds(2))
        let before = rig.relay["ntfy"].requests.count
        rig.daemon.request(.login)
        rig.server.answer(ScriptedServer.loggedIn())
        rig.loop.runPending()
        #expect(rig.daemon.status().state == "online")
        #expect(rig.relay["ntfy"].requests.count == before + 1, "sent the moment the session is back, not after the back-off")
        #expect(rig.relay["gotify"].pending == 1)
    }

    @Test func aTargetThatNeverAnswersHoldsUpNeitherKeepAlivesNorTheOtherTarget() throws {
        let rig = try kicked()
        // ntfy takes the request and never answers; gotify answers.
        rig.relay["gotify"].answer()
        rig.daemon.request(.login)
        rig.server.answer(ScriptedServer.loggedIn(interval: 60, timeout: 180))
        for seq in 1...3 {
            rig.loop.advance(by: .seconds(60))
            #expect(rig.server.pending == .keepAlive(seq: UInt64(seq)), "keep-alives on time")
            rig.server.answer(ScriptedServer.accepted())
        }
        rig.loop.advance(by: .seconds(60))
        rig.server.answer(.loggedOut(reason: "kicked", message: nil))
        rig.loop.runPending()
        // The login after the first kick was back online (issue 33.3: forwarded too), and a logout is critical,
        // so the repeat rule never holds the second kick (issue 31.7): gotify has taken the first kick and
        // is on back online, the second kick next; ntfy still hangs on the first, all three waiting.
        #expect(rig.relay["gotify"].requests.count == 2 && rig.daemon.status().relays.last?.queued == 2,
                "gotify goes on, not behind ntfy")
        #expect(rig.relay["ntfy"].requests.count == 1, "ntfy is still on the first")
        #expect(rig.daemon.status().relays.first?.queued == 3)
    }

    @Test func alertsLeftInTheOutboxGoOutWhenTheDaemonStartsAgain() throws {
        let rig = try kicked()
        let folder = rig.folder
        rig.relay["gotify"].answer()
        // The daemon is gone before ntfy answered (the request is lost with it).
        let config = ConfigurationParser.parse(
            "[server]\nurl = https://cc.campus.example/\n" + Self.relayConfig, file: folder + "/ccrelay.conf", home: folder, localize: .english).configuration!
        let relay = ScriptedRelay()
        let loop = ManualLoop()
        let again = Daemon(
            reading: .usable(config), configurationPath: folder + "/ccrelay.conf", version: "test", loop: loop,
            campus: CCCampusClient(ScriptedServer()), desktop: RecordingDesktop(), systemWatch: { _ in nil },
            forwardTransport: { relay.lane(for: $0) }, storePath: folder + "/alerts.db", log: { _ in })
        again.start { _ in }
        loop.runPending()
        #expect(relay["ntfy"].requests.count == 1, "the waiting alert goes out at start")
        let first = try body(rig.relay["ntfy"].requests.first)
        let second = try body(relay["ntfy"].requests.first)
        #expect(second["title"] as? String == first["title"] as? String)
        #expect((second["message"] as? String)?.contains("Delayed") == true, "the begun attempt makes it late")
        #expect(relay["ntfy"].requests.first?.headers == rig.relay["ntfy"].requests.first?.headers, "the same idempotency key")
        #expect(relay["gotify"].requests.isEmpty, "gotify already had it")
    }

    @Test func aTargetThatRefusesRaisesOneAlertThatClosesWhenItTakesThemAgain() throws {
        let rig = try kicked()
        let gotify = rig.relay["gotify"]
        gotify.answer(failure: "HTTP 401: {\"error\":\"Unauthorized\"}", status: 401)
        let refused = rig.desktop.posted.filter { $0.kind == .forwardRefused }
        #expect(refused.count == 1)
        #expect(refused.first?.body.contains("gotify https://gotify.campus.example #") == true, "\(refused)")
        #expect(refused.first?.body.contains("HTTP 401") == true && refused.first?.body.contains("AbC") == false)
        #expect(rig.relay["ntfy"].requests.count == 1, "the refusal alert is not forwarded itself")
        rig.loop.advance(by: .seconds(5))
        gotify.answer(failure: "HTTP 401", status: 401)
        #expect(rig.desktop.posted.filter { $0.kind == .forwardRefused }.count == 1, "one alert per episode")
        // A timeout is not a refusal: waiting may fix it.
        rig.loop.advance(by: .seconds(10))
        gotify.answer()
        #expect(rig.desktop.closed.contains(.forwardRefused), "closed once the target takes the alerts")
        #expect(try rig.store().alerts(limit: 5).contains { $0.kind == .forwardRefused }, "journaled like every alert")
    }

    /// issue 26: a push service says no inside an HTTP 200 (ServerChan's spent quota): a refusal, in its words.
    @Test func aPushServicesRefusalInAnHTTP200RaisesTheAlertInItsWords() throws {
        let rig = try kicked()
        rig.relay["gotify"].answer(failure: "ServerChan: 今日免费额度已用完 (code 40001, HTTP 200)", status: 200, refusedByService: true)
        let refused = rig.desktop.posted.filter { $0.kind == .forwardRefused }
        #expect(refused.count == 1 && refused.first?.body.contains("今日免费额度已用完") == true, "\(refused)")
        #expect(try rig.store().alerts(limit: 5).contains { $0.kind == .forwardRefused })
    }

    /// The daemon started again on the harness's journal with another `[relay]` group.
    func restarted(_ rig: DaemonHarness, relay config: String) -> (Daemon, ScriptedRelay, [String]) {
        let configuration = ConfigurationParser.parse(
            "[server]\nurl = https://cc.campus.example/\n" + config, file: rig.folder + "/ccrelay.conf", home: rig.folder, localize: .english).configuration!
        let relay = ScriptedRelay()
        let loop = ManualLoop()
        final class Log { var lines: [String] = [] }
        let log = Log()
        let again = Daemon(
            reading: .usable(configuration), configurationPath: rig.folder + "/ccrelay.conf", version: "test", loop: loop,
            campus: CCCampusClient(ScriptedServer()), desktop: RecordingDesktop(), systemWatch: { _ in nil },
            forwardTransport: { relay.lane(for: $0) }, storePath: rig.folder + "/alerts.db", log: { log.lines.append($0) })
        again.start { _ in }
        loop.runPending()
        return (again, relay, log.lines)
    }

    /// issue 20: fixing a token (as the refusal bubble asks) orphaned the queue: "waiting" forever.
    @Test func alertsWaitingForATargetGoToItOnceItsTokenIsFixed() throws {
        let rig = try kicked()
        rig.relay["gotify"].answer(failure: "HTTP 401", status: 401)
        rig.relay["ntfy"].answer()
        let (daemon, relay, _) = restarted(rig, relay: """
            [relay]
            ntfy = https://ntfy.campus.example/ccrelay-20231234
            gotify = https://gotify.campus.example/message?token=FixedToken
            """)
        #expect(relay["gotify"].requests.count == 1, "the waiting logout goes out with the new token")
        #expect(relay["gotify"].requests.first?.url.contains("token=FixedToken") == true)
        #expect(relay["ntfy"].requests.isEmpty, "ntfy already had it")
        relay["gotify"].answer()
        #expect(try rig.store().alerts(limit: 5).first { $0.kind == .loggedOut }?.forwardWaiting == 0)
        withExtendedLifetime(daemon) {}
    }

    /// A target taken out of [relay]: its queue is said and dropped, not left "waiting" in history forever.
    @Test func whatWaitedForARemovedTargetIsSaidAndDropped() throws {
        let rig = try kicked()
        rig.relay["ntfy"].answer()
        let (daemon, relay, logged) = restarted(rig, relay: "[relay]\nntfy = https://ntfy.campus.example/ccrelay-20231234\n")
        #expect(logged.contains("1 alert(s) waited for gotify https://gotify.campus.example/message, which is no longer in [relay]; they are dropped"),
                "\(logged)")
        #expect(relay["ntfy"].requests.isEmpty)
        #expect(try rig.store().alerts(limit: 5).first { $0.kind == .loggedOut }?.forwardWaiting == 0)
        withExtendedLifetime(daemon) {}
    }

    /// issue 20: alerts raised while the journal could not be written were
    /// shown but never forwarded, not even the logout.
    @Test func alertsRaisedWhileTheJournalCannotBeWrittenAreForwardedOnceItCan() throws {
        // The journal cannot be opened: a folder stands where the file belongs.
        let rig = try DaemonHarness(config: Self.relayConfig + "\n[keepalive]\nauto-relogin = false") { folder in
            try FileManager.default.createDirectory(atPath: folder + "/alerts.db", withIntermediateDirectories: true)
        }
        rig.server.answer(ScriptedServer.loggedIn(interval: 60, timeout: 180))
        rig.loop.advance(by: .seconds(60))
        rig.server.answer(.loggedOut(reason: "kicked", message: nil))
        rig.loop.runPending()
        #expect(rig.desktop.posted.map(\.kind) == [.loggedOut], "shown at once")
        #expect(rig.relay.lanes.allSatisfy { $0.requests.isEmpty })
        #expect(rig.logged.contains { $0.contains("journaled and forwarded once it can write again") }, "\(rig.logged)")
        // Space again; the next exchange (the user logs in again) journals what waited, and forwards it.
        try FileManager.default.removeItem(atPath: rig.folder + "/alerts.db")
        rig.loop.advance(by: .seconds(61))
        rig.daemon.request(.login)
        rig.server.answer(ScriptedServer.loggedIn(interval: 60, timeout: 180))
        rig.loop.runPending()
        #expect(rig.relay["ntfy"].requests.count == 1 && rig.relay["gotify"].requests.count == 1, "the logout reached both targets")
        let journaled = try rig.store().alerts(limit: 5)
        #expect(journaled.map(\.kind) == [.backOnline, .loggedOut] && journaled.last?.acknowledged == false, "\(journaled)")
        #expect(rig.daemon.status().badge == 1)
    }
}
