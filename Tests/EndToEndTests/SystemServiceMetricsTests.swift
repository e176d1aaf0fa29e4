import Foundation
import TestSupport
import Testing

/// The system service writes its textfile too: an instance of the template
/// beside a user's daemon in one folder (no series collide), rewritten many
/// times while the folder is read (no half-written file is ever seen); and,
/// run as the user ccrelay with systemd's UMask=0077, a folder it may not
/// write is one log line and a status note until it may.
extension SystemServiceTests {
    @Test(.enabled(if: getuid() == 0, "needs root: the system service's bus policy lets root own its name"),
          .enabled(if: PrometheusRig.available, "needs prometheus, prometheus-node-exporter (scripts/bootstrap)"))
    func noHalfWrittenFileReachesTheCollectorAndTwoDaemonsNeverCollide() async throws {
        let prometheus = try PrometheusRig()
        let bus = try PrivateBus(systemPolicy: Self.packaging + "/io.github.ccrelay.CCRelay.system.conf")
        let sim = try CCSimProcess(["--interval", "2", "--timeout", "8"])
        let lab = try Service(bus: bus, instance: "lab")
        try lab.write(config: sim.configuration(extra: "[keepalive]\nauto-relogin = false\n[metrics]\ntextfile = \(prometheus.textfiles)/ccrelay-lab.prom"))
        let service = try lab.start()
        defer { service.stop() }
        let user = try await DaemonRig(extraConfig: "[metrics]\ntextfile = \(prometheus.textfiles)/ccrelay.prom")
        #expect(await prometheus.ready(), "\(prometheus.log)")
        #expect(await eventually(timeout: .seconds(30)) { (try? lab.state()) == "online" }, "\(lab.log)")
        #expect(await eventually(timeout: .seconds(30)) { prometheus.query(#"ccrelay_state{state="online"} == 1"#)?.count == 2 },
                "both boxes' daemons: \(lab.log)\n\(user.log)\n\(prometheus.log)")
        #expect(Set((prometheus.query("ccrelay_info") ?? []).compactMap { ($0["metric"] as? [String: Any])?["exported_instance"] as? String })
                == ["lab", "user"])

        // Read the folder, and scrape the node exporter, while the instance rewrites its file again and again.
        let reading = LockedBox(true)
        let seen = LockedBox((reads: 0, torn: [String](), scrapes: 0, errors: [String]()))
        let reader = Thread {
            while reading.get() {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: prometheus.textfiles)) ?? []
                for name in names where name.hasSuffix(".prom") {
                    guard let text = try? String(contentsOfFile: prometheus.textfiles + "/" + name, encoding: .utf8) else { continue }
                    let complete = text.hasPrefix("# HELP ccrelay_info ") && text.hasSuffix("\n")
                        && text.split(separator: "\n").filter { $0.hasPrefix("ccrelay_outside_access{") }.count == 10
                    seen.update {
                        $0.reads += 1
                        if !complete { $0.torn.append(name + ": " + text) }
                        if !["ccrelay.prom", "ccrelay-lab.prom"].contains(name) { $0.torn.append("a stray file: " + name) }
                    }
                }
            }
        }
        reader.start()
        let scraper = Thread {
            while reading.get() {
                guard let metrics = prometheus.exporterMetrics() else { continue }
                seen.update {
                    $0.scrapes += 1
                    if !metrics.contains("node_textfile_scrape_error 0") || !metrics.contains(#"ccrelay_info{instance="lab""#) {
                        $0.errors.append(metrics.split(separator: "\n").filter { $0.contains("textfile") || $0.hasPrefix("ccrelay_info") }.joined(separator: "\n"))
                    }
                }
            }
        }
        scraper.start()
        let file = prometheus.textfiles + "/ccrelay-lab.prom"
        var rewrites = 0
        for round in 1...12 {
            let (command, wanted) = round % 2 == 1 ? ("logout", "offline") : ("login", "online")
            let before = try? String(contentsOfFile: file, encoding: .utf8)
            #expect(try lab.cli([command]).status == 0)
            #expect(await eventually(timeout: .seconds(20)) { (try? lab.state()) == wanted }, "\(lab.log)")
            if await eventually(timeout: .seconds(5), {
                (try? String(contentsOfFile: file, encoding: .utf8))?.contains(#"ccrelay_state{state="\#(wanted)",instance="lab"} 1"#) == true
            }), before?.contains(#"ccrelay_state{state="\#(wanted)",instance="lab"} 1"#) == false {
                rewrites += 1
            }
        }
        reading.set(false)
        while reader.isExecuting || scraper.isExecuting { try await Task.sleep(for: .milliseconds(20)) }
        let result = seen.get()
        #expect(rewrites == 12, "each change rewrote the file")
        #expect(result.reads > 100 && result.scrapes > 5, "\(result.reads) reads, \(result.scrapes) scrapes")
        #expect(result.torn.isEmpty, "\(result.torn.prefix(2))")
        #expect(result.errors.isEmpty, "\(result.errors.prefix(2))")
        #expect(prometheus.value("max_over_time(node_textfile_scrape_error[5m])") == 0)
        #expect(lab.log.contains("metrics:") == false, "no write failed: \(lab.log)")
    }

    @Test(.enabled(if: getuid() == 0, "needs root: it runs the service as the user ccrelay"),
          .enabled(if: PrometheusRig.available, "needs prometheus, prometheus-node-exporter (scripts/bootstrap)"))
    func theServiceAsItsUserSaysOnceItMayNotWriteTheFolderAndWritesOnceItMay() async throws {
        let users = try TestUsers(serviceUser: true)
        // The node exporter runs as Debian's prometheus user, as its unit does: it must read what ccrelay writes.
        let prometheus = try PrometheusRig(exporterUser: getpwnam("prometheus") == nil ? nil : "prometheus")
        let bus = try PrivateBus(systemPolicy: Self.packaging + "/io.github.ccrelay.CCRelay.system.conf")
        let sim = try CCSimProcess(["--interval", "2", "--timeout", "8"])
        let service = try freshService(bus)
        let pki = TestPKI.shared
        let setup = try setup(service, ["--server", sim.url, "--certificate", pki.clientCertificate, "--key", pki.clientKey,
                                                  "--ca-file", pki.caCertificate])
        #expect(setup.status == 0, "\(setup.standardOutput)\(setup.standardError)")
        let textfile = prometheus.textfiles + "/ccrelay.prom"
        try Data("[probe]\nmode = off\n[keepalive]\nauto-relogin = false\n[metrics]\ntextfile = \(textfile)\n".utf8).append(to: service.configPath)
        // As systemd starts it: the service's user, UMask=0077. The folder is root's, 0755, as Debian makes it.
        let daemon = try ChildProcess(
            "/usr/sbin/runuser", ["-u", "ccrelay", "--", "/bin/sh", "-c", #"umask 077; exec "$0" "$@""#, "/usr/bin/env"]
                + service.environment.map { "\($0)=\($1)" } + [users.programs.path("ccrelay"), "--system", "daemon"],
            outputFiles: (service.folder + "/daemon.out", service.logPath))
        defer { daemon.stop() }
        #expect(await eventually(timeout: .seconds(30)) { (try? service.state()) == "online" }, "\(service.log)")
        try await Task.sleep(for: .seconds(5))
        let said: [String] = service.log.split(separator: "\n").map(String.init).filter { $0.contains("metrics:") }
        #expect(said.count == 1, "one line, however many keep-alives: \(said)")
        #expect(said.first?.contains("Permission denied") == true && said.first?.contains("setfacl -m u:ccrelay:rwx \(prometheus.textfiles)") == true,
                "\(said)")
        let status = try service.cli(["status"])
        #expect(status.standardOutput.contains("cannot write \(textfile): Permission denied"), "the status notes it: \(status.standardOutput)")
        #expect(try service.state() == "online" && daemon.isRunning, "the daemon carries on")

        // The admin lets it write there: the next change writes the file, readable by the node exporter's user.
        chown(prometheus.textfiles, getpwnam("ccrelay").pointee.pw_uid, 0)
        #expect(try service.cli(["logout"]).status == 0)
        #expect(await eventually(timeout: .seconds(20)) { FileManager.default.fileExists(atPath: textfile) }, "\(service.log)")
        var info = stat()
        #expect(stat(textfile, &info) == 0 && info.st_mode & 0o777 == 0o644 && info.st_uid == getpwnam("ccrelay").pointee.pw_uid,
                "0644 though the umask is 0077")
        #expect(service.log.contains("metrics: \(textfile) is written again"))
        #expect(try service.cli(["status"]).standardOutput.contains("cannot write") == false)
        #expect(await prometheus.ready(), "\(prometheus.log)")
        #expect(await eventually(timeout: .seconds(10)) {
            prometheus.exporterMetrics()?.contains(#"ccrelay_state{instance="ccrelay",state="offline"} 1"#) == true
        }, "\(prometheus.exporterMetrics() ?? "")\n\(prometheus.log)")
        // It stops: its series go.
        daemon.stop()
        #expect(!FileManager.default.fileExists(atPath: textfile))
    }
}
