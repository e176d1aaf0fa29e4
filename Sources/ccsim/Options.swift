import CCRelayCore
/// The command line of `ccsim`.
struct Options {
    /// The protocol the simulator speaks on its service port.
    enum Dialect: String { case cc1, srun }

    var dialect = Dialect.cc1
    var srun = SrunOptions()
    var address = "127.0.0.1"
    var port: UInt16 = 0
    var controlPort: UInt16 = 0
    var tlsCertificate: String?
    var tlsKey: String?
    var clientCA: String?
    var interval = 60
    var timeout = 180
    var location = "none"
    var users: [String: String] = [:]

    static let usage = """
        Usage: ccsim [--protocol cc1] [options]
               ccsim --protocol srun [Srun options]

        A campus-server simulator for ccrelay's demo and tests. With --protocol cc1 (the
        default) it serves the CC/1 protocol of docs/protocol.md on a loopback address,
        over HTTPS with client certificates (or plain HTTP without --tls-cert), logs
        sessions out after `timeout` seconds without an accepted keep-alive, and takes
        scripted faults on a separate, plain-HTTP control API. With --protocol srun it
        plays a Srun (深澜) portal instead: see "Srun portal" below. On start it prints
        two lines and keeps running until SIGINT or SIGTERM:
            url=https://127.0.0.1:PORT/
            control=http://127.0.0.1:PORT/control/

        Options (both protocols):
          --protocol cc1|srun      the protocol served (default cc1)
          --listen ADDRESS[:PORT]  loopback IPv4 address and port (default 127.0.0.1:0,
                                   a free port)
          --control-port PORT      port of the control API (default: a free port)
          --tls-cert FILE          server certificate (PEM); with --tls-key, serve HTTPS
          --tls-key FILE           server private key (PEM)
          --user ID:PASSWORD       accept a password login (repeatable)
          -h, --help               show this help

        CC/1 options:
          --client-ca FILE         CA (PEM) that must have issued client certificates;
                                   logins without a valid one get 401 certificate_rejected
          --interval SECONDS       keep-alive interval granted (default 60)
          --timeout SECONDS        logout after this long without a keep-alive (default 180)
          --location MODE          none | optional | required (default none)

        CC/1 control API (JSON bodies; answers JSON):
          GET    /control/sessions        every session: token, ip, device, state, reason,
                                          and each keep-alive report (seq, location, at,
                                          accepted)
          GET    /control/stats           {"connections": N, "requests": N} on the CC/1 port
          POST   /control/kick            {"session"?: TOKEN, "reason"?: R, "message"?: TEXT}
                                          end one session (or all) with reason R (kicked)
          POST   /control/expire          {"session"?: TOKEN} as if the timeout had passed
          POST   /control/notice          {"id", "title", "body", "urgency"?}, or an array of
                                          them, sent in every reply from now on;
                                          DELETE clears the notices
          POST   /control/settings        {"interval"?, "timeout"?, "location"?}
          POST   /control/refuse-logins   {"status": 401, "error": "bad_credentials",
                                          "message"?: TEXT};  DELETE accepts logins again
          POST   /control/fault           {"endpoint": "login"|"keepalive"|"logout"|"any",
                                           "kind": "status"|"rate-limit"|"hang"|"slow"|
                                                   "garbage"|"oversized"|"reset"|"raw",
                                           "status"?: 503, "retry_after"?: S,
                                           "body"?: TEXT, "retry_after_header"?: TEXT (raw:
                                           exactly this body, status default 200),
                                           "delay_ms"?: MS, "count"?: N (default: forever)}
          DELETE /control/fault           clear all faults

        """ + "\n" + srunUsage

    static func parse(_ arguments: [String]) throws(SimulatorError) -> Options? {
        var options = Options()
        var index = 0
        /// Options that belong to one protocol only, as given.
        var cc1Only: [String] = []
        var srunOnly: [String] = []
        func value(_ name: String) throws(SimulatorError) -> String {
            index += 1
            guard index < arguments.count else { throw SimulatorError("option \(name) needs a value") }
            return arguments[index]
        }
        func number(_ name: String, _ range: ClosedRange<Int>) throws(SimulatorError) -> Int {
            let text = try value(name)
            guard let parsed = Int(text), range.contains(parsed) else {
                throw SimulatorError("option \(name) needs a number in \(range.lowerBound)...\(range.upperBound), not '\(text)'")
            }
            return parsed
        }
        while index < arguments.count {
            var argument = arguments[index]
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                var split = arguments
                split.replaceSubrange(index...index, with: [String(argument[..<equals]), String(argument[argument.index(after: equals)...])])
                return try parse(split)
            }
            switch argument {
            case "-h", "--help": return nil
            case "--listen":
                argument = try value(argument)
                let parts = argument.split(separator: ":", maxSplits: 1).map(String.init)
                options.address = parts[0]
                if parts.count == 2 {
                    guard let port = UInt16(parts[1]) else { throw SimulatorError("--listen port '\(parts[1])' is not a port") }
                    options.port = port
                }
                guard options.address.hasPrefix("127.") else {
                    throw SimulatorError("ccsim listens on loopback addresses only (127.0.0.0/8), not \(options.address)")
                }
            case "--protocol":
                let name = try value(argument)
                guard let dialect = Dialect(rawValue: name) else { throw SimulatorError("--protocol is cc1 or srun, not '\(name)'") }
                options.dialect = dialect
            case "--control-port": options.controlPort = UInt16(try number(argument, 0...65535))
            case "--tls-cert": options.tlsCertificate = try value(argument)
            case "--tls-key": options.tlsKey = try value(argument)
            case "--client-ca":
                cc1Only.append(argument)
                options.clientCA = try value(argument)
            case "--interval":
                cc1Only.append(argument)
                options.interval = try number(argument, ServerTiming.intervals)
            case "--timeout":
                cc1Only.append(argument)
                options.timeout = try number(argument, ServerTiming.timeouts)
            case "--ac-id":
                srunOnly.append(argument)
                options.srun.acID = try number(argument, 0...99999)
            case "--session-limit":
                srunOnly.append(argument)
                options.srun.sessionLimit = try number(argument, 1...1000)
            case "--when-full":
                srunOnly.append(argument)
                let name = try value(argument)
                guard let mode = SrunOptions.WhenFull(rawValue: name) else { throw SimulatorError("--when-full is reject or kick, not '\(name)'") }
                options.srun.whenFull = mode
            case "--strict-hmd5":
                srunOnly.append(argument)
                options.srun.strictHMD5 = true
            case "--portal-host":
                srunOnly.append(argument)
                let host = try value(argument).lowercased()
                guard !host.isEmpty, !host.contains(":"), !host.contains("/") else {
                    throw SimulatorError("--portal-host takes a host name or IPv4 address without port or scheme, not '\(host)'")
                }
                options.srun.portalHosts.append(host)
            case "--location":
                cc1Only.append(argument)
                options.location = try value(argument)
                guard ["none", "optional", "required"].contains(options.location) else {
                    throw SimulatorError("--location is none, optional or required")
                }
            case "--user":
                let pair = try value(argument).split(separator: ":", maxSplits: 1).map(String.init)
                guard pair.count == 2 else { throw SimulatorError("--user takes ID:PASSWORD") }
                options.users[pair[0]] = pair[1]
            default:
                throw SimulatorError("unknown option '\(argument)'; see ccsim --help")
            }
            index += 1
        }
        if (options.tlsCertificate == nil) != (options.tlsKey == nil) {
            throw SimulatorError("--tls-cert and --tls-key go together")
        }
        if options.dialect == .srun, let option = cc1Only.first {
            throw SimulatorError("\(option) is a CC/1 option; a Srun portal has no such thing (see ccsim --help)")
        }
        if options.dialect == .cc1, let option = srunOnly.first {
            throw SimulatorError("\(option) needs --protocol srun")
        }
        if srunOnly.contains("--when-full") && options.srun.sessionLimit == nil {
            throw SimulatorError("--when-full needs --session-limit")
        }
        if options.clientCA != nil && options.tlsCertificate == nil {
            throw SimulatorError("--client-ca needs HTTPS (--tls-cert and --tls-key)")
        }
        return options
    }
}
