import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

func say(_ text: String, to fd: Int32 = 1) {
    let line = Array((text + "\n").utf8)
    _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
}

func readText(_ path: String, what: String) throws(SimulatorError) -> String {
    guard let data = FileManager.default.contents(atPath: path) else {
        throw SimulatorError("cannot read \(what) \(path)")
    }
    return String(decoding: data, as: UTF8.self)
}

func start(_ options: Options) throws(SimulatorError) -> (HTTPServer, HTTPServer) {
    var tls: HTTPServer.TLSFiles?
    if let certificate = options.tlsCertificate, let key = options.tlsKey {
        tls = .init(certificatePEM: try readText(certificate, what: "TLS certificate"),
                    keyPEM: try readText(key, what: "TLS key"),
                    clientCAPEM: try options.clientCA.map { (path) throws(SimulatorError) in try readText(path, what: "client CA") })
    }
    switch options.dialect {
    case .cc1:
        let simulator = Simulator(settings: .init(
            interval: options.interval, timeout: options.timeout, location: options.location,
            requireClientCertificate: options.clientCA != nil, users: options.users))
        let service = try HTTPServer(address: options.address, port: options.port, tls: tls, handler: simulator.handle)
        let control = ControlAPI(simulator: simulator, server: { [weak service] in service })
        return (service, try HTTPServer(address: options.address, port: options.controlPort, tls: nil, handler: control.handle))
    case .srun:
        let portal = SrunPortal(options: options.srun, users: options.users, listenAddress: options.address)
        let service = try HTTPServer(address: options.address, port: options.port, tls: tls, handler: portal.handle)
        portal.ownURL.withLock { $0 = serviceURL(options, service) }
        let control = SrunControl(portal: portal, server: { [weak service] in service })
        return (service, try HTTPServer(address: options.address, port: options.controlPort, tls: nil, handler: control.handle))
    }
}

func serviceURL(_ options: Options, _ service: HTTPServer) -> String {
    "\(options.tlsCertificate == nil ? "http" : "https")://\(options.address):\(service.port)/"
}

let options: Options
do {
    guard let parsed = try Options.parse(Array(CommandLine.arguments.dropFirst())) else {
        say(Options.usage)
        exit(0)
    }
    options = parsed
} catch {
    say("ccsim: \(error)", to: 2)
    exit(2)
}

do {
    let (service, control) = try start(options)
    // A plain handler, installed before the URL is announced, so a signal sent
    // the moment the URL is known is never lost. Nothing needs saving: exit.
    signal(SIGPIPE, SIG_IGN)
    signal(SIGINT) { _ in _exit(0) }
    signal(SIGTERM) { _ in _exit(0) }
    say("url=" + serviceURL(options, service))
    say("control=http://\(options.address):\(control.port)/control/")
    // The servers run on their own threads until a signal ends the process.
    withExtendedLifetime((service, control)) {
        while true { pause() }
    }
} catch {
    say("ccsim: \(error)", to: 2)
    exit(1)
}
