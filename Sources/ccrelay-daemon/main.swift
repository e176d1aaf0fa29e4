import CCProtocol
import EventLoop
import DesktopServices
import DaemonShell
import CCRelayCore
import CoreVocabulary
import CLinux
import Forwarding
import ForwardingTransport
#if canImport(Glibc)
import Glibc
#endif

// The daemon process: `ccrelay daemon` checks the command line and execs
// this with `--config PATH`; `ccrelay config check` execs it with `--check`,
// so that both run the same checks. Kept apart from the CLI so that libcurl
// and its dependencies load only here, not in every `ccrelay status`.
//
// One thread: the main thread runs the event loop (epoll) that everything
// is driven by — the session timer, the signals, libcurl's sockets, every
// D-Bus connection. No libdispatch and no Swift concurrency: either starts
// worker threads, and libdispatch's pool monitor wakes the process every second.

/// A line on standard error, prefixed like every ccrelay message (journald
/// keeps it); one line whatever `text` holds (`PrintableText`): text from the
/// network never starts a line of its own.
func log(_ text: String) {
    let line = "ccrelay: " + PrintableText.oneLine(text) + "\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
}

/// A line with a syslog priority: sd-daemon's `<N>` prefix, which journald
/// (and syslog through it) reads as the line's priority.
func log(priority: Int, _ text: String) {
    let line = "<\(priority)>ccrelay: " + PrintableText.oneLine(text) + "\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
}

/// What SIGTERM and SIGINT stop: the daemon once it runs; before that
/// (while it claims its bus name) the process ends at once.
nonisolated(unsafe) var running: Daemon?

func stop() {
    guard let daemon = running else {
        log("stopped while starting")
        _exit(0)
    }
    daemon.stop { exit(0) }
}

/// Prints every problem of the configuration at `path` the way
/// `ccrelay config check` promises; exit status 0 when the daemon would start.
/// For the system service it also warns when no alert leaves the machine.
func check(_ path: String, system: Bool) -> Never {
    let loaded = ConfigurationCheck.load(path, log: log)
    for warning in loaded.warnings { log("warning: \(warning)") }
    for error in loaded.errors { log("error: \(error)") }
    guard let configuration = loaded.configuration else { exit(1) }
    if system && configuration.forwardTargets.isEmpty {
        log("warning: " + TextTemplate.fill(Localization.localize(
            "%s: no [relay] target: on a machine without a desktop nobody will hear about a logout (add forward = URL — bark://, schan://, tgram://, … — or ntfy = URL, gotify = URL, webhook = URL under [relay]; the system log has the alerts too)"),
            [path]))
    }
    let line = "\(path): ok\n"
    _ = line.withCString { write(1, $0, strlen($0)) }
    exit(0)
}

/// `ccrelay setup`'s test of the answers: the configuration's checks, then
/// one login and its logout; says what the server answered. Exit status 0
/// only when it logged in. On standard input: the PKCS#12 bundle's password
/// (with `bundlePasswordOnStdin`), then the campus password (for a password login).
func tryLogin(_ path: String, bundlePasswordOnStdin: Bool) -> Never {
    // Setup killed (Ctrl-C, SIGTERM) takes its trial with it.
    _ = ccrelay_die_with_parent(SIGKILL)
    let bundlePassword = bundlePasswordOnStdin ? readLine(strippingNewline: true) ?? "" : nil
    let loaded = ConfigurationCheck.load(path, bundlePassword: bundlePassword, log: log)
    // The user gave answers, not this file: the problem alone, which names the answer.
    for error in loaded.errors { log("error: \(error.message)") }
    guard let configuration = loaded.configuration else { exit(1) }
    let password = configuration.user == nil ? nil : readLine(strippingNewline: true)
    do {
        let loop = try EventLoop()
        try CampusTrial.run(configuration, password: password, version: ccrelayVersion, loop: loop) { outcome in
            switch outcome {
            case .loggedIn(let sentence):
                let line = sentence + "\n"
                _ = line.withCString { write(1, $0, strlen($0)) }
                exit(0)
            case .refused(let sentence, let code):
                log(TextTemplate.fill(Localization.localize("the server did not log you in: %s"), [sentence]))
                // A TLS server spoken to in plain HTTP closes the connection or answers bytes that are no HTTP.
                if configuration.serverProtocol == .cc1, configuration.serverURL.lowercased().hasPrefix("http://"),
                    [.protocolError, .connectionLost].contains(code)
                {
                    log(TextTemplate.fill(Localization.localize("hint: if the server speaks TLS, use https://%s"),
                                            [String(configuration.serverURL.dropFirst("http://".count))]))
                }
                exit(1)
            }
        }
        loop.run()
    } catch {
        log("cannot try the login: \(error)")
    }
    exit(1)
}

/// `ccrelay relay test [TARGET]`: a test message to the relay targets;
/// prints each one's answer. Exit status 0 when every one took it, 2 when
/// `TARGET` names none, 1 otherwise.
func relayTest(_ path: String, target name: String?) -> Never {
    _ = ccrelay_die_with_parent(SIGKILL)
    let loaded = ConfigurationCheck.load(path, log: log)
    for error in loaded.errors { log("error: \(error)") }
    guard let configuration = loaded.configuration else { exit(1) }
    let targets = ForwardTrial.targets(configuration, matching: name)
    guard !targets.isEmpty else {
        if configuration.forwardTargets.isEmpty {
            log(TextTemplate.fill(Localization.localize("%s forwards alerts nowhere: add a [relay] group with forward = URL (bark://, schan://, tgram://, …), ntfy = URL, gotify = URL or webhook = URL (see man ccrelay.conf)"), [path]))
            exit(1)
        }
        log(TextTemplate.fill(Localization.localize("no [relay] target matches '%s'; configured: %s"), [name ?? "", configuration.forwardTargets.map(\.displayName).joined(separator: ", ")]))
        exit(2)
    }
    var failed = false
    do {
        let loop = try EventLoop()
        ForwardTrial.run(
            targets, caFile: configuration.forwardCAFile, version: ccrelayVersion, loop: loop,
            report: { target, answer in
                failed = failed || !answer.delivered
                let line = ForwardTrial.line(target, answer) + "\n"
                _ = line.withCString { write(1, $0, strlen($0)) }
            },
            done: { exit(failed ? 1 : 0) })
        loop.run()
    } catch {
        log(TextTemplate.fill(Localization.localize("cannot send the test message: %s"), ["\(error)"]))
    }
    exit(1)
}

/// Loads the configuration and starts the daemon; it then runs on `loop`
/// until SIGTERM or SIGINT, which exit the process.
func runDaemon(_ given: [String]) -> Never {
    // --system [--instance NAME]: the system service (ccrelay.service, or one
    // ccrelay@NAME.service): system bus, /etc/ccrelay, /var/lib/ccrelay.
    let system = given.first == "--system"
    var arguments = system ? Array(given.dropFirst()) : given
    var instance: String?
    if system, arguments.first == "--instance", arguments.count >= 2 {
        guard SystemService.isInstanceName(arguments[1]) else {
            log("an instance name is a letter or _ and then letters, digits, _ or - (at most 32; not ccrelay, the main service's), not '\(arguments[1])'")
            exit(2)
        }
        instance = arguments[1]
        arguments.removeFirst(2)
    }
    // No configuration: what the network shows an anonymous request (setup's offer).
    if arguments.first == "--discover" { Discover.run(Array(arguments.dropFirst())) }
    let path: String
    switch arguments.count {
    case 0: path = system ? SystemService.configurationPath(instance: instance) : ConfigurationFile.defaultPath()
    case 2 where arguments[0] == "--config": path = arguments[1]
    case 3 where arguments[0] == "--check" && arguments[1] == "--config": check(arguments[2], system: system)
    case 3 where arguments[0] == "--try" && arguments[1] == "--config": tryLogin(arguments[2], bundlePasswordOnStdin: false)
    case 4 where arguments[0] == "--try" && arguments[1] == "--config" && arguments[3] == "--p12-password-stdin":
        tryLogin(arguments[2], bundlePasswordOnStdin: true)
    case 3 where arguments[0] == "--diagnose" && arguments[1] == "--config": Diagnose.run(arguments[2])
    case 3...4 where arguments[0] == "--relay-test" && arguments[1] == "--config":
        relayTest(arguments[2], target: arguments.count == 4 ? arguments[3] : nil)
    default:
        log("ccrelay-daemon is started by 'ccrelay [--system[=INSTANCE]] daemon [--config PATH]'; see 'ccrelay daemon --help'")
        exit(2)
    }
    if system, let owner = DaemonProcess.foreignOwnerOfStateFolder(instance: instance) {
        // Root opening the service's journal would make it root's and lock the service out (issue 31.5).
        log("the system service's state folder belongs to the account \(owner), which runs it: start it with systemctl start "
            + (instance.map { "ccrelay@\($0)" } ?? "ccrelay") + " (or as that account), not as root")
        exit(1)
    }
    let (reading, warnings) = ConfigurationCheck.read(path, log: log)
    for warning in warnings { log("warning: \(warning)") }
    for error in reading.problems { log("error: \(error)") }

    // Until the loop runs, SIGTERM and SIGINT keep their default action and
    // end the process at once (connecting to a bus that does not answer can
    // take long, and there is nothing to save yet). Then they are blocked —
    // before any thread exists, so every thread inherits the mask — and
    // read from a signalfd on the loop, which stops the daemon in order.
    let loop: EventLoop
    let daemon: Daemon
    let stopSignals: StopSignals
    do {
        loop = try EventLoop()
        // Without a usable configuration the daemon stays up as `unconfigured` until the file is usable.
        daemon = try Daemon(
            reading: reading, configurationPath: path, version: ccrelayVersion, loop: loop, system: system, instance: instance, log: log,
            logAlert: { log(priority: $0, $1) })
        StopSignals.block()
        stopSignals = try StopSignals(loop: loop, handler: stop)
    } catch {
        log("daemon: cannot start: \(error)")
        exit(1)
    }
    daemon.start { error in
        if let error {
            log("daemon: cannot start: \(error)")
            exit(1)
        }
        running = daemon
    }
    withExtendedLifetime(stopSignals) { loop.run() }
    exit(0)
}

// A daemon that re-exec'd itself for a new configuration inherits the blocked mask.
StopSignals.unblock()
// A reader of standard error that went away (`ccrelay daemon 2>&1 | head`)
// must not kill the daemon before it logs out and saves its session: a write
// to it fails with EPIPE instead, and a failed log line is not fatal.
signal(SIGPIPE, SIG_IGN)
Localization.setUp()
runDaemon(Array(CommandLine.arguments.dropFirst()))
