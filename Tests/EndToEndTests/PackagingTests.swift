import DesktopServices
import Foundation
import CCRelayCore
import TestSupport
import Testing

/// The files that make ccrelay a desktop citizen, checked by the tools that
/// judge them, and the .deb installed into a clean root and run from there.
@Suite(.desktopBudget) struct PackagingTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    static let packaging = repository + "/packaging"

    func temporaryDirectory(_ name: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-\(name)-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// The system unit and its template (issue 24) as packaging/install writes them, by
    /// systemd's own tools offline: no systemd runs as PID 1 here to start them.
    @Test(arguments: ["ccrelay.service", "ccrelay@.service"])
    func theSystemUnitsVerifyAndAreHardened(_ name: String) throws {
        let destdir = try temporaryDirectory("system-unit")
        let installed = try run(Self.packaging + "/install", [buildProductsDirectory.path, "/usr", destdir], environment: ["PACKAGE": "ccrelay"])
        #expect(installed.status == 0, "\(installed.standardError)")
        // The programs of this build stand in for /usr/bin's.
        let unit = destdir + "/" + name
        try String(contentsOfFile: destdir + "/usr/lib/systemd/system/" + name, encoding: .utf8)
            .replacing("ExecStart=/usr/bin/", with: "ExecStart=\(buildProductsDirectory.path)/").write(toFile: unit, atomically: true, encoding: .utf8)
        let verify = try run("/usr/bin/systemd-analyze", ["verify", "--man=no", unit])
        #expect(verify.status == 0 && verify.standardError.isEmpty, "\(verify.standardOutput)\(verify.standardError)")
        let security = try run("/usr/bin/systemd-analyze", ["security", "--offline=true", unit])
        let overall = security.standardOutput.split(separator: "\n").last { $0.contains("Overall exposure level") }.map(String.init) ?? ""
        // docs/system-service.md says 1.3 ("OK"); systemd calls up to 2.0 well hardened.
        let score = overall.split(separator: " ").compactMap { Double($0) }.first
        #expect(score.map { $0 <= 2.0 } == true, "\(overall)\n\(security.standardError)")
        let text = try String(contentsOfFile: unit, encoding: .utf8)
        let instance = name.contains("@")
        for line in ["User=ccrelay", "Restart=always", "StartLimitIntervalSec=0", "Type=notify", "WatchdogSec=", "CapabilityBoundingSet=\n",
                     "Wants=network-online.target", "ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes", "NoNewPrivileges=yes",
                     "ExecStart=\(buildProductsDirectory.path)/ccrelay --system\(instance ? "=%i" : "") daemon\n",
                     "StateDirectory=ccrelay\(instance ? "/%i" : "")\n"] {
            #expect(text.contains(line), "\(line)")
        }
    }

    @Test func theUserUnitVerifies() throws {
        let directory = try temporaryDirectory("unit")
        let unit = directory + "/ccrelay.service"
        try String(contentsOfFile: Self.packaging + "/ccrelay.service.in", encoding: .utf8)
            .replacing("@bindir@", with: buildProductsDirectory.path).write(toFile: unit, atomically: true, encoding: .utf8)
        let runtime = try temporaryDirectory("runtime")
        chmod(runtime, 0o700)
        let result = try run("/usr/bin/systemd-analyze", ["--user", "--man=no", "verify", unit], environment: ["XDG_RUNTIME_DIR": runtime])
        #expect(result.status == 0 && result.standardError.isEmpty, "\(result.standardError)")
        let text = try String(contentsOfFile: unit, encoding: .utf8)
        for line in ["Type=notify", "WatchdogSec=", "Restart=on-failure", "StartLimitBurst=", "After=graphical-session.target",
                     "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK"] {
            #expect(text.contains(line), "\(line)")
        }
    }

    @Test func theDesktopFileAndActivationFileAreValid() throws {
        let result = try run("/usr/bin/desktop-file-validate", [Self.packaging + "/io.github.ccrelay.CCRelay.desktop"])
        #expect(result.status == 0 && result.standardOutput.isEmpty && result.standardError.isEmpty,
                "\(result.standardOutput)\(result.standardError)")
        let desktop = try String(contentsOfFile: Self.packaging + "/io.github.ccrelay.CCRelay.desktop", encoding: .utf8)
        #expect(desktop.contains("X-GNOME-UsesNotifications=true") && desktop.contains("Name[zh_CN]=") && desktop.contains("Name[zh_TW]="))
        let activation = try String(contentsOfFile: Self.packaging + "/io.github.ccrelay.CCRelay.service.in", encoding: .utf8)
        #expect(activation.contains("Name=io.github.ccrelay.CCRelay") && activation.contains("SystemdService=ccrelay.service"))
    }

    @Test(arguments: ["ccrelay.1", "ccsim.1", "ccrelay.conf.5", "ccrelay-daemon.8"])
    func theManPagesRenderWithoutWarnings(_ page: String) throws {
        let result = try run("/usr/bin/groff", ["-man", "-Tutf8", "-ww", "-z", Self.packaging + "/" + page])
        #expect(result.status == 0 && result.standardError.isEmpty, "\(result.standardError)")
    }

    /// `groff -ww` is silent about a `.TP` tag spread over two macro lines,
    /// which runs option text into the description: the rendered page shows it.
    @Test func theManPagesCommandsListHasOneCommandPerEntry() throws {
        let rendered = try run("/usr/bin/groff", ["-man", "-Tutf8", "-P-cbou", Self.packaging + "/ccrelay.1"]).standardOutput
        let lines = rendered.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try #require(lines.firstIndex(of: "COMMANDS"))
        let end = try #require(lines[start...].firstIndex(of: "FILES"))
        // Entry tags stand at the section indent (7 spaces); descriptions deeper.
        let tags = lines[(start + 1)..<end].filter { $0.hasPrefix("       ") && !$0.hasPrefix("        ") }
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.hasPrefix("Every command") }
        let commands = ["daemon", "setup", "status", "show", "badge", "history", "login", "logout", "notify-test", "config", "relay", "timeline", "metrics", "doctor", "completions", "demo"]
        #expect(Set(tags.compactMap { $0.split(separator: " ").first.map(String.init) }) == Set(commands), "\(tags)")
        for tag in ["daemon [--config PATH] [--autostart]", "history [--limit N] [--kind KIND] [--json]", "login [--wait SECONDS]",
                    "notify-test [KIND...] [--wait SECONDS] [--json]", "config check [--config PATH] | config path"] {
            #expect(tags.contains(tag), "the whole synopsis of an entry is its tag: \(tag) in \(tags)")
        }
    }

    @Test func everyUserVisibleStringIsTranslatedInBothCatalogues() throws {
        let directory = try temporaryDirectory("pot")
        let sources = try FileManager.default.subpathsOfDirectory(atPath: Self.repository + "/Sources")
            .filter { $0.hasSuffix(".swift") }.map { Self.repository + "/Sources/" + $0 }
            .filter { (try? String(contentsOfFile: $0, encoding: .utf8).contains("localize(")) == true }
        #expect(!sources.isEmpty)
        let template = directory + "/ccrelay.pot"
        let extracted = try run(Self.repository + "/scripts/xgettext-swift", [template] + sources)
        #expect(extracted.status == 0, "\(extracted.standardError)")
        for language in ["zh_CN", "zh_TW"] {
            let catalogue = Self.repository + "/resources/po/\(language).po"
            let check = try run("/usr/bin/msgfmt", ["--check", "-o", "/dev/null", catalogue])
            #expect(check.status == 0, "\(language): \(check.standardError)")
            // Every message of the sources has a translation (msgcmp fails on a missing or untranslated one).
            let compared = try run("/usr/bin/msgcmp", [catalogue, template])
            #expect(compared.status == 0, "\(language): \(compared.standardError)")
            let fuzzy = try run("/usr/bin/msgattrib", ["--only-fuzzy", "--no-obsolete", catalogue])
            #expect(fuzzy.standardOutput.isEmpty, "\(language) has fuzzy entries: \(fuzzy.standardOutput)")
        }
        // The tray menu's Log out and Quit are different words (issue 21: zh_CN said 退出 for both).
        for (language, logOut, quit) in [("zh_CN", "注销", "退出 CC Relay"), ("zh_TW", "登出", "結束 CC Relay")] {
            let text = try String(contentsOfFile: Self.repository + "/resources/po/\(language).po", encoding: .utf8)
            #expect(text.contains("msgid \"Log out\"\nmsgstr \"\(logOut)\"\n") && text.contains("msgid \"Quit CC Relay\"\nmsgstr \"\(quit)\"\n"),
                    "\(language)")
        }
    }

    @Test func installAndUninstallHonourPrefixAndDestdir() throws {
        let destdir = try temporaryDirectory("destdir")
        let installed = try run(Self.packaging + "/install", [buildProductsDirectory.path, "/opt/ccrelay-test", destdir])
        #expect(installed.status == 0, "\(installed.standardError)")
        let root = destdir + "/opt/ccrelay-test"
        for file in ["bin/ccrelay", "bin/ccsim", "libexec/ccrelay/ccrelay-daemon", "libexec/ccrelay/ccrelay-demo",
                     "share/locale/zh_CN/LC_MESSAGES/ccrelay.mo", "lib/systemd/user/ccrelay.service",
                     "share/dbus-1/services/io.github.ccrelay.CCRelay.service", "share/man/man1/ccrelay.1.gz",
                     "share/man/man5/ccrelay.conf.5.gz", "share/man/man8/ccrelay-daemon.8.gz",
                     "share/bash-completion/completions/ccrelay", "share/icons/hicolor/scalable/apps/io.github.ccrelay.CCRelay.svg",
                     "share/doc/ccrelay/examples/ccrelay.rules.yml", "share/doc/ccrelay/examples/ccrelay-dashboard.json"] {
            #expect(FileManager.default.fileExists(atPath: root + "/" + file), "\(file)")
        }
        // PNG icons beside the SVG, each of its size (the PNG header's IHDR says).
        for size in [16, 22, 24, 32, 48, 64, 128, 256] {
            let png = try Data(contentsOf: URL(fileURLWithPath: root + "/share/icons/hicolor/\(size)x\(size)/apps/io.github.ccrelay.CCRelay.png"))
            #expect(png.prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), "a PNG")
            let width = png.count > 24 ? png[16..<20].reduce(0) { $0 << 8 | Int($1) } : 0
            let height = png.count > 24 ? png[20..<24].reduce(0) { $0 << 8 | Int($1) } : 0
            #expect(width == size && height == size, "\(size) px: \(width)×\(height)")
        }
        // The tray icon's states, scalable and raster.
        for state in ["online", "failing", "logged-out", "no-network", "setup"] {
            for file in ["scalable/status/io.github.ccrelay.CCRelay-\(state).svg", "22x22/status/io.github.ccrelay.CCRelay-\(state).png"] {
                #expect(FileManager.default.fileExists(atPath: root + "/share/icons/hicolor/" + file), "\(file)")
            }
        }
        // The XDG autostart entry goes where every desktop looks, whatever the prefix.
        let autostart = destdir + "/etc/xdg/autostart/io.github.ccrelay.CCRelay-autostart.desktop"
        let entry = try String(contentsOfFile: autostart, encoding: .utf8)
        #expect(entry.contains("Exec=/opt/ccrelay-test/bin/ccrelay daemon --autostart"), "\(entry)")
        let valid = try run("/usr/bin/desktop-file-validate", [autostart])
        #expect(valid.status == 0 && valid.standardOutput.isEmpty, "\(valid.standardOutput)")
        let unit = try String(contentsOfFile: root + "/lib/systemd/user/ccrelay.service", encoding: .utf8)
        #expect(unit.contains("ExecStart=/opt/ccrelay-test/bin/ccrelay daemon"), "the prefix, not DESTDIR, is in the unit")
        // The installed copy finds its daemon and its translations.
        let help = try run(root + "/bin/ccrelay", ["daemon", "--config", "/nonexistent.conf"],
                           environment: ["LANG": "zh_CN.UTF-8", "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"])
        #expect(help.standardError.contains("nonexistent.conf"), "\(help.standardError)")
        let removed = try run(Self.packaging + "/install", ["-", "/opt/ccrelay-test", destdir, "--uninstall"])
        #expect(removed.status == 0)
        let left = try FileManager.default.subpathsOfDirectory(atPath: destdir).filter {
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: destdir + "/" + $0, isDirectory: &isDirectory) && !isDirectory.boolValue
        }
        #expect(left.isEmpty, "left behind: \(left)")
    }

    /// The packages `make test` builds first (`make deb`, which runs lintian on both).
    static func debs() throws -> (client: String, simulator: String) {
        let folder = repository + "/.build/deb/"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        let client = try #require(names.first { $0.hasPrefix("ccrelay_\(ccrelayVersion)_") }, "no .deb: run 'make deb' (make test does)")
        let simulator = try #require(names.first { $0.hasPrefix("ccrelay-sim_\(ccrelayVersion)_") }, "no ccrelay-sim .deb")
        return (folder + client, folder + simulator)
    }

    /// The functions an idle daemon runs per keep-alive and per Srun check lie side by side in
    /// the build the packages are made from (packaging/release-build hands the linker
    /// packaging/ccrelay-daemon.order): the list is not stale (nine in ten of its names are in
    /// the build) and their 600 or so fill at most 120 pages of 4 KiB, where the linker's own
    /// layout spreads them over about 240.
    @Test func theKeepAlivePathIsLaidOutTogetherInTheShippedBuild() throws {
        let daemon = Self.repository + "/.build/release-static/release/ccrelay-daemon"
        try #require(FileManager.default.isExecutableFile(atPath: daemon), "no release build: run 'make deb' (make test does)")
        let order = try String(contentsOfFile: Self.packaging + "/ccrelay-daemon.order", encoding: .utf8)
            .split(separator: "\n").map { String($0.dropFirst(".text.".count)) }
        #expect(order.count >= 200, "packaging/ccrelay-daemon.order lists \(order.count) functions: run bench/order-functions")
        let symbols = try run("/usr/bin/nm", [daemon])
        try #require(symbols.status == 0, "\(symbols.standardError)")
        var address: [String: UInt64] = [:]
        for line in symbols.standardOutput.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count == 3, let value = UInt64(fields[0], radix: 16) { address[String(fields[2])] = value }
        }
        let placed = order.compactMap { address[$0] }
        #expect(placed.count * 10 >= order.count * 9, "\(order.count - placed.count) of \(order.count) listed functions are gone: run bench/order-functions")
        let pages = Set(placed.map { $0 / 4096 })
        #expect(pages.count <= 120, "the keep-alive path's \(placed.count) functions fill \(pages.count) pages")
    }

    /// `make dist`'s tarball, unpacked into a fresh folder: its top folder (install.sh, root/, needs).
    func unpackedTarball() throws -> String {
        let folder = Self.repository + "/.build/dist/"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        let tarball = try #require(names.first { $0.hasPrefix("ccrelay-\(ccrelayVersion)-") && $0.hasSuffix(".tar.gz") },
                                   "no tarball: run 'make dist' (make test does)")
        let unpacked = try temporaryDirectory("dist")
        let untar = try run("/usr/bin/tar", ["-C", unpacked, "-xzf", folder + tarball])
        guard untar.status == 0 else { throw TestSetupError("tar: \(untar.standardError)") }
        return unpacked + "/" + String(tarball.dropLast(".tar.gz".count))
    }

    /// Every file, folder and link under `root`, relative to it.
    func contents(_ root: String) throws -> [String] {
        try FileManager.default.subpathsOfDirectory(atPath: root).sorted()
    }

    /// issue 24: `make dist`'s tarball for a machine that is not online yet,
    /// installed with its own install.sh into an empty prefix and run from there;
    /// issue 31: `install.sh --uninstall` removes all it installed (files and the
    /// folders it made) but the configuration and the journal, `--purge` those too.
    @Test func theTarballInstallsIntoAnEmptyPrefixAndChecksAConfiguration() throws {
        let top = try unpackedTarball()
        let root = try temporaryDirectory("dist-root")
        let installed = try run(top + "/install.sh", ["--prefix", "/opt/ccrelay", "--destdir", root], environment: ["PATH": "/usr/bin:/bin"])
        #expect(installed.status == 0, "\(installed.standardOutput)\(installed.standardError)")
        let prefix = root + "/opt/ccrelay"
        let version = try run(prefix + "/bin/ccrelay", ["--version"])
        #expect(version.standardOutput.hasPrefix("ccrelay \(ccrelayVersion)"), "\(version.standardError)")
        // The daemon's own check, from libexec beside the CLI, on a configuration of the test PKI.
        try FileManager.default.createDirectory(atPath: root + "/etc/ccrelay", withIntermediateDirectories: true)
        let config = root + "/etc/ccrelay/ccrelay.conf"
        let pki = TestPKI.shared
        try "[server]\nurl = https://cc.campus.example/\nca-file = \(pki.caCertificate)\n[auth]\ncertificate = \(pki.clientCertificate)\nkey = \(pki.clientKey)\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        chmod(config, 0o600)
        let check = try run(prefix + "/bin/ccrelay", ["config", "check", "--config", config])
        #expect(check.status == 0 && check.standardOutput.contains("\(config): ok"), "\(check.standardOutput)\(check.standardError)")
        let unit = try String(contentsOfFile: prefix + "/lib/systemd/system/ccrelay.service", encoding: .utf8)
        #expect(unit.contains("ExecStart=/opt/ccrelay/bin/ccrelay --system daemon"))
        #expect(FileManager.default.fileExists(atPath: root + "/etc/dbus-1/system.d/io.github.ccrelay.CCRelay.conf"),
                "the bus reads another prefix's policy only from /etc")
        #expect(FileManager.default.fileExists(atPath: prefix + "/share/locale/zh_CN/LC_MESSAGES/ccrelay.mo"))

        // The service's journal, as it would have written it; then the installed copy uninstalls.
        try FileManager.default.createDirectory(atPath: root + "/var/lib/ccrelay", withIntermediateDirectories: true)
        try "journal".write(toFile: root + "/var/lib/ccrelay/alerts.db", atomically: true, encoding: .utf8)
        let removed = try run(prefix + "/share/ccrelay/install.sh", ["--uninstall", "--prefix", "/opt/ccrelay", "--destdir", root],
                              environment: ["PATH": "/usr/bin:/bin"])
        #expect(removed.status == 0, "\(removed.standardOutput)\(removed.standardError)")
        #expect(try contents(root) == ["etc", "etc/ccrelay", "etc/ccrelay/ccrelay.conf", "var", "var/lib", "var/lib/ccrelay", "var/lib/ccrelay/alerts.db"],
                "only the configuration and the journal stay")
        // Nothing installed any more: the unpacked tarball's install.sh says so.
        let again = try run(top + "/install.sh", ["--uninstall", "--prefix", "/opt/ccrelay", "--destdir", root])
        #expect(again.status == 1 && again.standardError.contains("no ccrelay installed by install.sh"), "\(again.standardError)")
        _ = try run(top + "/install.sh", ["--prefix", "/opt/ccrelay", "--destdir", root])
        let purged = try run(top + "/install.sh", ["--uninstall", "--purge", "--prefix", "/opt/ccrelay", "--destdir", root])
        #expect(purged.status == 0, "\(purged.standardError)")
        let left = try contents(root)
        #expect(left.allSatisfy { ["etc", "var", "var/lib"].contains($0) }, "\(left)")
    }

    /// issue 31: on a base Debian 12 libcurl, SQLite and libdbus are missing.
    /// install.sh checks the libraries the programs link (the tarball's
    /// `needs`, from the programs) in `ldconfig -p` and refuses with the
    /// Debian packages to bring, writing nothing. Here `ldconfig` is a fake
    /// that hides those three (scripts/install-check does it in a real
    /// debootstrap system).
    @Test func theTarballRefusesWhereTheLibrariesAreMissingAndNamesTheirPackages() throws {
        let top = try unpackedTarball()
        let needs = try String(contentsOfFile: top + "/needs", encoding: .utf8)
        for soname in ["libcurl.so.4\tlibc6,x86-64\tlibcurl4", "libsqlite3.so.0\tlibc6,x86-64\tlibsqlite3-0", "libdbus-1.so.3\tlibc6,x86-64\tlibdbus-1-3"] {
            #expect(needs.contains(soname), "needs lists what the programs link: \(needs)")
        }
        let shims = try temporaryDirectory("ldconfig")
        try writeExecutable("#!/bin/sh\n/sbin/ldconfig \"$@\" | grep -v -e 'libcurl\\.so\\.4 ' -e 'libsqlite3\\.so\\.0 ' -e 'libdbus-1\\.so\\.3 '\n",
                            to: shims + "/ldconfig")
        let root = try temporaryDirectory("dist-nolibs")
        let refused = try run(top + "/install.sh", ["--destdir", root], environment: ["PATH": shims + ":/usr/bin:/bin"])
        #expect(refused.status == 1, "\(refused.standardOutput)\(refused.standardError)")
        #expect(refused.standardError.contains("lacks libcurl.so.4 libdbus-1.so.3 libsqlite3.so.0"), "\(refused.standardError)")
        #expect(refused.standardError.contains("apt install libcurl4 libdbus-1-3 libsqlite3-0\n"), "\(refused.standardError)")
        #expect(!refused.standardOutput.contains("installed"), "\(refused.standardOutput)")
        #expect(try contents(root).isEmpty, "nothing is written")
    }

    /// issue 31: the system user first, then the bus policy that names it, then
    /// the running bus told to read it — else the service cannot own its name
    /// until someone reloads the bus. Installed into another root (`--root`),
    /// with a bus listening at its /run/dbus/system_bus_socket; systemd-sysusers
    /// and dbus-send are the real ones behind wrappers that note what is there
    /// when they run. `--uninstall --purge` then removes the user it made.
    @Test(.enabled(if: getuid() == 0, "needs root: install.sh makes the user only as root"))
    func theTarballMakesTheUserThenThePolicyThenReloadsTheBus() async throws {
        let top = try unpackedTarball()
        let root = try temporaryDirectory("dist-system")
        try FileManager.default.createDirectory(atPath: root + "/run/dbus", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/etc", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: "/etc/ld.so.cache", toPath: root + "/etc/ld.so.cache")
        let bus = try PrivateBus(socketPath: root + "/run/dbus/system_bus_socket")
        let shims = try temporaryDirectory("order")
        let log = shims + "/log"
        let policy = root + "/etc/dbus-1/system.d/io.github.ccrelay.CCRelay.conf"
        let note = "[ -f '\(policy)' ] && p=policy || p=no-policy; grep -q '^ccrelay:' '\(root)/etc/passwd' 2>/dev/null && u=user || u=no-user"
        for (program, real, also) in [("systemd-sysusers", "/usr/bin/systemd-sysusers", ""), ("dbus-send", "/usr/bin/dbus-send", " $DBUS_SYSTEM_BUS_ADDRESS")] {
            try writeExecutable("#!/bin/sh\n\(note)\necho \"\(program) $u $p\(also)\" >> '\(log)'\nexec \(real) \"$@\"\n",
                                to: shims + "/" + program)
        }
        let installed = try run(top + "/install.sh", ["--root", root], environment: ["PATH": shims + ":/usr/bin:/bin"])
        #expect(installed.status == 0, "\(installed.standardOutput)\(installed.standardError)")
        let steps = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        #expect(steps == ["systemd-sysusers no-user no-policy", "dbus-send user policy unix:path=\(root)/run/dbus/system_bus_socket"],
                "the user, then the policy, then the bus reloads: \(steps)")
        #expect(installed.standardOutput.contains("the system bus read the new policy"), "\(installed.standardOutput)")
        #expect(try String(contentsOfFile: root + "/etc/passwd", encoding: .utf8).contains("ccrelay:x:"))
        #expect(try String(contentsOfFile: root + "/usr/local/share/ccrelay/manifest", encoding: .utf8).contains("\nuser ccrelay\n"))

        let purged = try run(root + "/usr/local/share/ccrelay/install.sh", ["--uninstall", "--purge", "--root", root],
                             environment: ["PATH": shims + ":/usr/bin:/bin"])
        #expect(purged.status == 0, "\(purged.standardOutput)\(purged.standardError)")
        #expect(!(try String(contentsOfFile: root + "/etc/passwd", encoding: .utf8)).contains("ccrelay:"), "the user it made is gone")
        #expect(!FileManager.default.fileExists(atPath: root + "/usr/local/bin/ccrelay") && !FileManager.default.fileExists(atPath: policy))
        #expect(purged.standardOutput.contains("the system bus read the new policy"), "the bus forgets the policy: \(purged.standardOutput)")
        withExtendedLifetime(bus) {}
    }

    /// The oldest version of each library the packages may ask for: what Ubuntu 22.04 LTS ships.
    static let ubuntu2204: [String: String] = [
        "libc6": "2.35", "libcurl4": "7.81.0", "libssl3": "3.0.2", "libsqlite3-0": "3.37.2", "libdbus-1-3": "1.12.20",
        "libmicrohttpd12": "0.9.75", "libgnutls30": "3.7.3",
    ]

    /// issue 22: the packages must run on glibc 2.35 (Ubuntu 22.04) and ask for nothing newer than it ships.
    @Test func bothPackagesRunOnUbuntu2204sLibraries() throws {
        let (client, simulator) = try Self.debs()
        for deb in [client, simulator] {
            let depends = try run("/usr/bin/dpkg-deb", ["-f", deb, "Depends"]).standardOutput
            for clause in depends.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespacesAndNewlines) }) {
                let parts = clause.split(separator: " ", maxSplits: 1).map(String.init)
                guard parts.count == 2, parts[1].hasPrefix("(>= "), let oldest = Self.ubuntu2204[parts[0]] else { continue }
                let wanted = String(parts[1].dropFirst(4).dropLast())
                let compare = try run("/usr/bin/dpkg", ["--compare-versions", wanted, "le", oldest])
                #expect(compare.status == 0, "\(deb): \(clause) is newer than Ubuntu 22.04's \(oldest)")
            }
            // Every symbol version every program needs, from the files themselves.
            let folder = try temporaryDirectory("elf")
            #expect(try run("/usr/bin/dpkg-deb", ["-x", deb, folder]).status == 0)
            for program in ["usr/bin/ccrelay", "usr/libexec/ccrelay/ccrelay-daemon", "usr/bin/ccsim"]
            where FileManager.default.fileExists(atPath: folder + "/" + program) {
                let symbols = try run("/usr/bin/objdump", ["-T", "-p", folder + "/" + program]).standardOutput
                let versions = Set(symbols.matches(of: /GLIBC_(?:ABI_)?([0-9A-Z_.]+)/).map { String($0.output.1) })
                #expect(!versions.isEmpty, "\(program)")
                for version in versions {
                    let older = try run("/usr/bin/dpkg", ["--compare-versions", version, "le", "2.35"]).status == 0
                    let acceptable = version.first?.isNumber == true && older
                    #expect(acceptable, "\(program) needs GLIBC_\(version), newer than Ubuntu 22.04's 2.35")
                }
            }
        }
        let clientDepends = try run("/usr/bin/dpkg-deb", ["-f", client, "Depends"]).standardOutput
        let clientRecommends = try run("/usr/bin/dpkg-deb", ["-f", client, "Recommends"]).standardOutput
        for library in ["libdbus-1-3", "libcurl4", "libsqlite3-0", "libssl3", "libc6"] {
            #expect(clientDepends.contains(library), "Depends: \(clientDepends)")
        }
        for simulatorOnly in ["libmicrohttpd", "libgnutls", "python3"] {
            #expect(!(clientDepends + clientRecommends).contains(simulatorOnly), "the client needs no \(simulatorOnly): \(clientDepends) \(clientRecommends)")
        }
        #expect(!clientDepends.contains("swift"), "no Swift runtime needed")
        // Issue 33.9: a server box gets no desktop's worth of packages; GeoClue (only for a campus that
        // wants locations, and every desktop ships it) is a suggestion.
        #expect(!clientRecommends.contains("geoclue"), "Recommends: \(clientRecommends)")
        #expect(try run("/usr/bin/dpkg-deb", ["-f", client, "Suggests"]).standardOutput.contains("geoclue-2.0"))
        let simulatorDepends = try run("/usr/bin/dpkg-deb", ["-f", simulator, "Depends"]).standardOutput
        #expect(simulatorDepends.contains("ccrelay (= \(ccrelayVersion))") && simulatorDepends.contains("libmicrohttpd12"),
                "\(simulatorDepends)")
        #expect(try run("/usr/bin/dpkg-deb", ["-f", client, "Suggests"]).standardOutput.contains("ccrelay-sim"))
    }

    /// An empty root with a dpkg database, for `dpkg --root`.
    func emptyDpkgRoot(_ name: String) throws -> String {
        let root = try temporaryDirectory(name)
        for directory in ["var/lib/dpkg/info", "var/lib/dpkg/updates", "var/log", "usr/bin", "etc"] {
            try FileManager.default.createDirectory(atPath: root + "/" + directory, withIntermediateDirectories: true)
        }
        // As on a real system, /usr/bin holds glibc's `locale` program (issue 21: the CLI took
        // /usr/bin/locale for its catalogue folder and was never translated).
        try FileManager.default.copyItem(atPath: "/usr/bin/locale", toPath: root + "/usr/bin/locale")
        _ = FileManager.default.createFile(atPath: root + "/var/lib/dpkg/status", contents: Data())
        return root
    }

    /// `dpkg -i DEB` into `root`, its maintainer scripts run outside it with DPKG_ROOT.
    func dpkgInstall(_ deb: String, into root: String) throws -> CommandResult {
        try run("/usr/bin/dpkg", ["--root=" + root, "--force-depends", "--force-not-root", "--force-script-chrootless", "--log=/dev/null", "-i", deb])
    }

    /// issue 31: the .deb and the tarball do not fight. Installed over the
    /// tarball's install, the package's programs and unit would be shadowed by
    /// /usr/local's and dpkg would stop at the autostart entry (a conffile);
    /// so the package refuses while the tarball's install is there, naming
    /// install.sh --uninstall, and install.sh refuses while the package is installed.
    @Test(.enabled(if: getuid() == 0, "needs root: install.sh makes the user only as root"))
    func theDebAndTheTarballEachRefuseToInstallOverTheOther() throws {
        let deb = try Self.debs().client
        let top = try unpackedTarball()
        let root = try emptyDpkgRoot("deb-over-tarball")
        try FileManager.default.copyItem(atPath: "/etc/ld.so.cache", toPath: root + "/etc/ld.so.cache")
        let tarball = try run(top + "/install.sh", ["--root", root])
        #expect(tarball.status == 0, "\(tarball.standardOutput)\(tarball.standardError)")
        let refused = try dpkgInstall(deb, into: root)
        #expect(refused.status != 0 && refused.standardError.contains("sudo /usr/local/share/ccrelay/install.sh --uninstall"),
                "\(refused.standardOutput)\(refused.standardError)")
        #expect(!FileManager.default.fileExists(atPath: root + "/usr/bin/ccrelay"), "nothing of the package was unpacked")
        let removed = try run(root + "/usr/local/share/ccrelay/install.sh", ["--uninstall", "--root", root])
        #expect(removed.status == 0, "\(removed.standardError)")
        let installed = try dpkgInstall(deb, into: root)
        #expect(installed.status == 0, "\(installed.standardOutput)\(installed.standardError)")
        let again = try run(top + "/install.sh", ["--root", root])
        #expect(again.status == 1 && again.standardError.contains("the package ccrelay is installed") && again.standardError.contains("apt remove ccrelay"),
                "\(again.standardOutput)\(again.standardError)")
        #expect(!FileManager.default.fileExists(atPath: root + "/usr/local/bin/ccrelay"))
    }

    @Test func theDebInstallsIntoACleanRootAndRuns() async throws {
        let deb = try Self.debs().client
        let root = try emptyDpkgRoot("dpkg-root")
        let installed = try dpkgInstall(deb, into: root)
        #expect(installed.status == 0, "\(installed.standardOutput)\(installed.standardError)")
        // The system service's user and group, made in that root (DPKG_ROOT), not on this machine.
        let passwd = (try? String(contentsOfFile: root + "/etc/passwd", encoding: .utf8)) ?? ""
        #expect(passwd.contains("ccrelay:x:") && passwd.contains(":/var/lib/ccrelay:/usr/sbin/nologin"), "\(passwd)")
        #expect((try? String(contentsOfFile: root + "/etc/group", encoding: .utf8))?.contains("ccrelay:x:") == true)
        let ccrelay = root + "/usr/bin/ccrelay"
        let version = try run(ccrelay, ["--version"])
        #expect(version.status == 0 && version.standardOutput.hasPrefix("ccrelay \(ccrelayVersion)"), "\(version.standardOutput)\(version.standardError)")
        // The changelog a user reads is this release's, made from CHANGELOG.md.
        let changelog = try run("/bin/sh", ["-c", "gzip -dc '\(root)/usr/share/doc/ccrelay/changelog.gz'"]).standardOutput
        #expect(changelog.hasPrefix("ccrelay (\(ccrelayVersion)) unstable") && changelog.contains("ccrelay (0.1.0)"), "\(changelog)")
        // Without ccrelay-sim, the demo says which package it needs.
        let demo = try run(ccrelay, ["demo"], environment: ["LANG": "C.UTF-8"])
        #expect(demo.status == 1 && demo.standardError.contains("sudo apt install ccrelay-sim"), "\(demo.standardError)")
        #expect(!FileManager.default.fileExists(atPath: root + "/usr/bin/ccsim"))
        // The licence, machine-readable (DEP-5), as the Apache-2.0 LICENSE of the source.
        let copyright = try String(contentsOfFile: root + "/usr/share/doc/ccrelay/copyright", encoding: .utf8)
        #expect(copyright.hasPrefix("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"))
        #expect(copyright.contains("\nLicense: Apache-2.0\n") && copyright.contains("/usr/share/common-licenses/Apache-2.0"))
        // The README and an example configuration that the daemon's own parser reads without a problem.
        #expect(FileManager.default.fileExists(atPath: root + "/usr/share/doc/ccrelay/README.md.gz"))
        let example = root + "/usr/share/doc/ccrelay/examples/ccrelay.conf"
        let parsed = ConfigurationParser.parse(try String(contentsOfFile: example, encoding: .utf8), file: example, home: "/home/s", localize: .english)
        #expect(parsed.errors.isEmpty && parsed.warnings.isEmpty, "\(parsed.errors) \(parsed.warnings)")
        let ldd = try run("/usr/bin/ldd", [ccrelay])
        #expect(!ldd.standardOutput.contains("libswift"), "static Swift runtime: \(ldd.standardOutput)")
        // notify-test from the installed copy, in Chinese from its own catalogue, against dunst.
        let bus = try PrivateBus()
        let dunst = try await Dunst(on: bus)
        var environment = bus.environment
        environment["LANG"] = "zh_CN.UTF-8"
        environment["LANGUAGE"] = "zh_CN"
        let shown = try run(ccrelay, ["notify-test", "logged-out"], environment: environment)
        #expect(shown.status == 0, "\(shown.standardOutput)\(shown.standardError)")
        #expect(try dunst.closeAllAndReadHistory().contains { $0.summary == "已从校园网注销" || $0.body.contains("登录已被注销，请重新登录") })
    }
}
