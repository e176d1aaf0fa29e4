@testable import CCProtocol
import AlertJournal
import CurlTransport
import DBus
@testable import DaemonShell
import DesktopServices
import EventLoop
import Foundation
import CCRelayCore
import CoreVocabulary
import Forwarding
import ForwardingTransport

/// The daemon shell on the embedded loop: virtual time, a scripted CC/1
/// server, a desktop face that records what it is asked, a journal in a
/// temporary folder. No process, no bus, no socket.
final class DaemonHarness {
    let loop: ManualLoop
    let server = ScriptedServer()
    let desktop = RecordingDesktop()
    /// The system watch the daemon made: the test sends its logind and NetworkManager events.
    let system = FakeSystemWatch()
    /// Every `[relay]` target of the configuration, answered by hand.
    let relay = ScriptedRelay()
    /// The outside-access probe, answered by hand.
    let probe = ScriptedProbe()
    let folder: String
    let daemon: Daemon

    /// What the daemon asked of its process: systemd notifications, restarts; and the sleep the test makes.
    let processLog = ProcessLog()

    /// `beforeStart` gets the harness's folder before the daemon is made (to spoil its journal, say).
    /// `wallClock` is where the loop's virtual wall clock starts (the real time by default).
    init(config extra: String = "", passwords: [String: String] = [:], watchdog: Duration? = nil,
         wallClock: Double = WallClock.now(), beforeStart: (String) throws -> Void = { _ in }) throws {
        loop = ManualLoop(wallClock: wallClock)
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-shell-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try beforeStart(folder)
        // `{folder}` in the extra lines is the harness's own folder.
        let text = "[server]\nurl = https://cc.campus.example/\n" + extra.replacingOccurrences(of: "{folder}", with: folder) + "\n"
        let parsed = ConfigurationParser.parse(text, file: folder + "/ccrelay.conf", home: folder, localize: .english)
        guard let configuration = parsed.configuration else {
            throw HarnessError("the test configuration does not parse: \(parsed.errors)")
        }
        desktop.passwords = passwords
        let log = LogBox()
        daemon = Daemon(
            reading: .usable(configuration), configurationPath: folder + "/ccrelay.conf", version: "test", loop: loop,
            campus: CCCampusClient(server), desktop: desktop, systemWatch: { [system] onEvent in
                system.onEvent = onEvent
                return system
            }, forwardTransport: { [relay] target in relay.lane(for: target) }, outsideProbe: probe, storePath: folder + "/alerts.db",
            process: ProcessHooks(
                notify: { [processLog] in processLog.notifications.append($0) }, watchdogPeriod: watchdog,
                sleptSinceBoot: { [processLog] in processLog.slept }, restart: { [processLog] _ in processLog.restarts += 1 },
                exit: { [processLog] in processLog.exits.append($0) }, isTheUserUnit: false),
            log: { log.lines.append($0) })
        self.log = log
        var failure: Error?
        daemon.start { failure = $0 }
        loop.runPending()
        if let failure { throw failure }
    }

    private let log: LogBox
    var logged: [String] { log.lines }

    /// The journal as another process (the CLI) reads it.
    func store() throws -> AlertStore { try AlertStore(path: folder + "/alerts.db", log: { _ in }) }

    deinit { try? FileManager.default.removeItem(atPath: folder) }
}

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

private final class LogBox {
    var lines: [String] = []
}

/// The daemon's process as the harness fakes it.
final class ProcessLog {
    var notifications: [String] = []
    var restarts = 0
    /// The statuses the daemon exited with (it cannot, on the embedded loop: they are recorded).
    var exits: [Int32] = []
    /// What CLOCK_BOOTTIME minus CLOCK_MONOTONIC says: the test raises it to make the machine "sleep".
    var slept: Duration = .zero
}

/// A CC/1 server the test answers by hand: requests wait until answered.
final class ScriptedServer: CCTransport {
    enum Request: Equatable {
        case login(user: String?, password: String?)
        case keepAlive(seq: UInt64)
        case logout
    }

    private(set) var requests: [Request] = []
    private var waiting: [(Request, (Exchange) -> Void)] = []
    private(set) var drops = 0

    var pending: Request? { waiting.first?.0 }

    func login(device: String, user: String?, password: String?, timeout: Duration?, completion: @escaping (Exchange) -> Void) {
        record(.login(user: user, password: password), completion)
    }

    func keepAlive(session: String, seq: UInt64, location: LocationFix?, timeout: Duration?, completion: @escaping (Exchange) -> Void) {
        record(.keepAlive(seq: seq), completion)
    }

    func logout(session: String, timeout: Duration?, completion: @escaping (Exchange) -> Void) {
        record(.logout, completion)
    }

    /// As CCClient does: in turn, after the requests asked for before it.
    func dropConnection(completion: @escaping () -> Void) {
        drops += 1
        if waiting.isEmpty { completion() } else { dropsWaiting.append(completion) }
    }
    private var dropsWaiting: [() -> Void] = []

    private func record(_ request: Request, _ completion: @escaping (Exchange) -> Void) {
        requests.append(request)
        waiting.append((request, completion))
    }

    /// Answers the oldest waiting request with `outcome`.
    func answer(_ outcome: Outcome) {
        guard !waiting.isEmpty else { return }
        let (_, completion) = waiting.removeFirst()
        completion(Exchange(outcome: outcome, httpStatus: 200, connectionsOpened: 0))
        if waiting.isEmpty {
            let drops = dropsWaiting
            dropsWaiting = []
            drops.forEach { $0() }
        }
    }

    static func loggedIn(interval: Int = 60, timeout: Int = 180, notices: [Notice] = []) -> Outcome {
        .loggedIn(LoginGrant(session: String(repeating: "s", count: 32), ip: "10.1.2.3", interval: interval, timeout: timeout,
                             location: .none, notices: notices, droppedNotices: 0))
    }

    static func accepted(interval: Int? = nil, notices: [Notice] = []) -> Outcome {
        .accepted(KeepAliveGrant(interval: interval, timeout: nil, notices: notices))
    }
}

/// Relay targets the test answers by hand: each target's requests wait until answered.
final class ScriptedRelay {
    final class Lane: ForwardTransport {
        let target: ForwardTarget
        private(set) var requests: [ForwardRequest] = []
        private var waiting: [(ForwardAnswer) -> Void] = []
        init(target: ForwardTarget) { self.target = target }

        func post(_ request: ForwardRequest, completion: @escaping (ForwardAnswer) -> Void) {
            requests.append(request)
            waiting.append(completion)
        }

        var pending: Int { waiting.count }

        /// Answers the oldest waiting request: 200, or the failure given (with its HTTP status, 0 for none),
        /// judged as `ForwardPoster` judges it — a refusal in the service's own words (`refusedByService`) refuses the target.
        func answer(failure: String? = nil, status: Int = 0, refusedByService: Bool = false) {
            let verdict: ForwardVerdict =
                if let failure { refusedByService ? .refused(failure) : AnswerRule.byStatus(status, failure) } else { .delivered }
            answer(verdict, status: failure == nil ? 200 : status)
        }

        /// Answers the oldest waiting request with `verdict`.
        func answer(_ verdict: ForwardVerdict, status: Int) {
            guard !waiting.isEmpty else { return }
            waiting.removeFirst()(ForwardAnswer(status: status, text: "{}", verdict: verdict))
        }
    }

    private(set) var lanes: [Lane] = []

    func lane(for target: ForwardTarget) -> Lane {
        let lane = Lane(target: target)
        lanes.append(lane)
        return lane
    }

    subscript(_ service: String) -> Lane { lanes.first { $0.target.service.name == service }! }
}

/// The outside-access probe as the test answers it: each check waits until answered.
final class ScriptedProbe: OutsideProbing {
    private var waiting: [(OutsideReport) -> Void] = []
    private(set) var checks = 0
    var pending: Int { waiting.count }

    func check(completion: @escaping (OutsideReport) -> Void) {
        checks += 1
        waiting.append(completion)
    }

    /// Answers the oldest check: `v4` for IPv4, IPv6 limited.
    func answer(_ v4: OutsideVerdict) {
        guard !waiting.isEmpty else { return }
        waiting.removeFirst()(OutsideReport(
            ipv4: FamilyCheck(verdict: v4, answers: ["probe.test: \(v4)"]), ipv6: FamilyCheck(verdict: .limited, answers: ["probe.test: dns"])))
    }
}

/// logind and NetworkManager as the test says.
final class FakeSystemWatch: SystemWatching {
    var onEvent: ((DaemonEvent) -> Void)?
    var onDesktopSessionClosed: (() -> Void)?
    /// Whether the test's logind "follows" the daemon's session.
    var followsDesktopSession = false
    private(set) var started = false
    private(set) var sleepLocksReleased = 0

    func start() { started = true }
    func releaseSleepLock() { sleepLocksReleased += 1 }
    /// How often the daemon asked NetworkManager to check the way out.
    private(set) var connectivityChecksAsked = 0
    func checkConnectivity() { connectivityChecksAsked += 1 }

    func send(_ event: DaemonEvent) { onEvent?(event) }
}

/// A desktop face that records posts, closes and announcements.
final class RecordingDesktop: DesktopFace {
    var onAlertEvent: ((Notifier.Event) -> Void)?
    var onReconnected: (() -> Void)?
    var onBusGone: (() -> Void)?
    var connection: Connection? { nil }
    var passwords: [String: String] = [:]
    private(set) var posted: [Alert] = []
    private(set) var closed: [AlertKind] = []
    /// Every snapshot published, in order.
    private(set) var published: [DaemonSnapshot] = []
    /// The dock badges and the properties a bus face would announce for them.
    private(set) var badges: [BadgeState] = []
    private(set) var announced: [ControlProperty] = []
    private(set) var target: ControlTarget?
    /// What the target showed as the face started (what an activating `GetStatus` is answered with).
    private(set) var shownAtStart: DaemonSnapshot?

    func start(serving target: ControlTarget, done: @escaping (BusNameError?) -> Void) {
        self.target = target
        shownAtStart = target.snapshot
        done(nil)
    }

    func publish(_ snapshot: DaemonSnapshot, previous: DaemonSnapshot?) {
        let change = SnapshotChange(from: previous, to: snapshot)
        published.append(snapshot)
        if change.badge { badges.append(snapshot.badge) }
        announced += change.properties
    }
    func post(_ alert: Alert) { posted.append(alert) }
    func close(_ kind: AlertKind) { closed.append(kind) }
    private(set) var adopted: [AlertKind: UInt32] = [:]
    func adopt(_ kind: AlertKind, shownAs id: UInt32) { adopted[kind] = id }

    func password(user: String, completion: @escaping (Result<String?, DBusError>) -> Void) {
        completion(.success(passwords[user]))
    }
}
