import CCProtocol
import CCProtocolAsync
import EventLoop
import Foundation

/// Measures CPU and wall time per keep-alive: ccrelay's CCClient (one reused
/// TLS connection) next to `curl` run once per keep-alive, as a user would
/// script it, against the same ccsim with the same client certificate.
///
///   keepalive-bench URL CA CERT KEY COUNT CURL_COUNT

func cpuSeconds(_ who: __rusage_who) -> Double {
    var usage = rusage()
    getrusage(who.rawValue, &usage)
    func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1_000_000 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

func spawnAndWait(_ arguments: [String]) -> Int32 {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    let argv = arguments.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    guard posix_spawn(&pid, arguments[0], &actions, nil, argv, environ) == 0 else { return -1 }
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    return status
}

let arguments = CommandLine.arguments
guard arguments.count == 7, let count = Int(arguments[5]), let curlCount = Int(arguments[6]) else {
    print("usage: keepalive-bench URL CA CERT KEY COUNT CURL_COUNT")
    exit(2)
}
let (url, ca, certificate, key) = (arguments[1], arguments[2], arguments[3], arguments[4])
let loopThread = EventLoopThread()
let client = try CCClient(
    configuration: ServerConfiguration(url: url, caFile: ca, certificate: certificate, key: key),
    client: ClientInfo(version: "bench"), loop: loopThread.loop)
guard case .loggedIn(let grant) = await client.login(device: "bench").outcome else {
    print("login failed")
    exit(1)
}

// ccrelay's client: one handle, one connection.
let clock = ContinuousClock()
let cpuBefore = cpuSeconds(RUSAGE_SELF)
let started = clock.now
var connections = 0
for seq in 1...count {
    let exchange = await client.keepAlive(session: grant.session, seq: UInt64(seq))
    guard case .accepted = exchange.outcome else {
        print("keep-alive \(seq) failed: \(exchange.outcome)")
        exit(1)
    }
    connections += exchange.connectionsOpened
}
let ourWall = seconds(clock.now - started) / Double(count)
let ourCPU = (cpuSeconds(RUSAGE_SELF) - cpuBefore) / Double(count)

// curl, one process per keep-alive.
let curlCPUBefore = cpuSeconds(RUSAGE_CHILDREN)
let curlStarted = clock.now
for seq in 1...curlCount {
    let status = spawnAndWait([
        "/usr/bin/curl", "-sS", "--fail", "--noproxy", "*", "--cacert", ca, "--cert", certificate, "--key", key,
        "-H", "Authorization: CC-Session \(grant.session)", "-H", "Content-Type: application/json",
        "-d", "{\"seq\":\(count + seq)}", url + "cc/v1/session/keepalive",
    ])
    guard status == 0 else {
        print("curl keep-alive \(seq) failed with status \(status)")
        exit(1)
    }
}
let curlWall = seconds(clock.now - curlStarted) / Double(curlCount)
let curlCPU = (cpuSeconds(RUSAGE_CHILDREN) - curlCPUBefore) / Double(curlCount)

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}
func ms(_ value: Double) -> String { String(format: "%.3f ms", value * 1000) }
print("keep-alives over TLS against ccsim (client certificate, EC P-256)")
print("  ccrelay CCClient  \(count) keep-alives   CPU \(ms(ourCPU))/keep-alive   wall \(ms(ourWall))/keep-alive   new connections: \(connections)")
print("  curl per process  \(curlCount) keep-alives   CPU \(ms(curlCPU))/keep-alive   wall \(ms(curlWall))/keep-alive   new connections: \(curlCount)")
print(String(format: "  CPU ratio (curl / ccrelay): %.1fx   wall ratio: %.1fx", curlCPU / ourCPU, curlWall / ourWall))
