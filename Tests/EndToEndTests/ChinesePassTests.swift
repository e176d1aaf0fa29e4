import Foundation
import CCRelayCore
import CoreVocabulary
import TestSupport
import Testing

/// A student whose desktop is zh_CN.UTF-8 meets no English sentence (issue
/// 33.2): every command's usage errors, the errors without a daemon or with a
/// broken configuration, the commands a running daemon answers (status, badge,
/// history, timeline, login, logout) and every alert's bubble, under
/// LANG=zh_CN.UTF-8 with the catalogues compiled from resources/po.
@Suite(.desktopBudget) struct ChinesePassTests {
    static let ccrelay = DaemonRig.ccrelay
    static let chinese = ["LANG": "zh_CN.UTF-8", "LANGUAGE": "", "LC_ALL": "", "CCRELAY_LOCALEDIR": NotifyTestCommandTests.localeDirectory]

    /// An environment with a private state folder and no session bus, in Chinese.
    func isolated() -> [String: String] {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-zh-\(UUID().uuidString)").path
        return Self.chinese.merging(["XDG_STATE_HOME": state, "XDG_CONFIG_HOME": state + "/config", "HOME": state,
                                     "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/ccrelay-no-bus",
                                     "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/ccrelay-no-system-bus"]) { $1 }
    }

    /// Fails with the command and the English it printed.
    func expectChinese(_ arguments: [String], _ result: CommandResult, sourceLocation: SourceLocation = #_sourceLocation) {
        let output = result.standardOutput + result.standardError
        #expect(!output.isEmpty, "ccrelay \(arguments.joined(separator: " ")) said nothing", sourceLocation: sourceLocation)
        if let english = EnglishSentence.find(in: output) {
            Issue.record("ccrelay \(arguments.joined(separator: " ")): English reaches a zh_CN user: \(english)", sourceLocation: sourceLocation)
        }
    }

    static let usageMistakes: [[String]] = [
        [], ["stauts"], ["history", "--limt", "3"], ["history", "--limit", "0"], ["history", "--kind", "loged-out"], ["badge", "claer"],
        ["status", "--json=1"], ["status", "extra"], ["show", "extra"], ["login", "extra"], ["logout", "extra"], ["history", "extra"],
        ["timeline", "extra"], ["demo", "extra"], ["doctor", "extra"], ["daemon", "extra"], ["timeline", "--since", "3x"],
        ["config", "frob"], ["relay", "frob"], ["completions"], ["completions", "fsh"], ["notify-test", "bogus"],
        ["notify-test", "--wait", "x"], ["login", "--wait", "x"], ["login", "--user", "x"], ["login", "--save-password"],
        ["--system=Bad!", "status"], ["daemon", "--system"], ["setup", "--protocol", "x"], ["setup", "extra"], ["relay", "test", "a", "b"],
    ]

    @Test(arguments: usageMistakes)
    func usageErrorsAreChinese(_ arguments: [String]) throws {
        let result = try run(Self.ccrelay, arguments, environment: isolated())
        #expect(result.status == 2, "\(arguments): \(result.standardError)")
        expectChinese(arguments, result)
    }

    @Test func withoutADaemonOrABusTheErrorsAreChinese() throws {
        let environment = isolated()
        for arguments in [["status"], ["show"], ["login"], ["logout"], ["badge"], ["badge", "clear"], ["history"], ["timeline"],
                          ["notify-test"], ["config", "check"], ["relay", "test"], ["--system", "status"], ["--system", "history"]] {
            expectChinese(arguments, try run(Self.ccrelay, arguments, environment: environment))
        }
        // A session bus, but no daemon on it.
        let bus = try PrivateBus()
        for arguments in [["status"], ["login"], ["logout"], ["show"]] {
            let result = try run(Self.ccrelay, arguments, environment: environment.merging(["DBUS_SESSION_BUS_ADDRESS": bus.address]) { $1 })
            #expect(result.status == 3, "\(arguments): \(result.standardError)")
            expectChinese(arguments, result)
        }
    }

    /// relay test's verdict for a target that does not answer (libcurl's own words quoted).
    @Test func relayTestsVerdictIsChinese() throws {
        let environment = isolated()
        let path = environment["HOME"]! + "/relay.conf"
        try FileManager.default.createDirectory(atPath: environment["HOME"]!, withIntermediateDirectories: true)
        try "[server]\nurl = https://127.0.0.1:9/\n[auth]\nuser = a\n[relay]\nforward = ntfy://127.0.0.1:1/topic\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o600)
        let result = try run(Self.ccrelay, ["relay", "test", "--config", path], environment: environment)
        #expect(result.status == 1 && result.standardOutput.contains("无法连接"), "\(result.standardOutput)\(result.standardError)")
        expectChinese(["relay", "test"], result)
        let none = try run(Self.ccrelay, ["relay", "test", "gotify", "--config", path], environment: environment)
        #expect(none.status == 2)
        expectChinese(["relay", "test", "gotify"], none)
    }

    /// A file with a mistake on each marked line: every one must be reported (as FILE:LINE), in Chinese.
    struct BrokenFile: Sendable, CustomStringConvertible {
        var name: String
        var lines: [(text: String, wrong: Bool)]
        /// The exit status of `config check`: 1 with an error, 0 with warnings only.
        var status: Int32 = 1
        var text: String { lines.map(\.text).joined(separator: "\n") + "\n" }
        var description: String { name }
    }

    /// Every error and warning of the configuration's grammar and values (issue 33.2's last item): groups and
    /// keys (with their did-you-mean), each value, the forward URLs of the push services, [srun], the rules
    /// that depend on the whole file.
    static let brokenFiles: [BrokenFile] = [
        BrokenFile(name: "every-mistake", lines: [
            ("warn-before = 60", true), ("[server", true), ("[nonsense]", true), ("[server]", false),
            ("url = ftp://cc.example.edu.cn/", true), ("urll = https://cc.example.edu.cn/", true), ("url = https://cc.example.edu.cn/ x", true),
            ("url = https://20231234:secret@cc.example.edu.cn/", true), ("protocol = cc2", true), ("ca-file = campus-ca.pem", true),
            ("pinned-key = sha1//abc", true), ("interface = wl/an0", true), ("interface = wlan0", true),
            ("url = http://cc.example.edu.cn/", true), ("[auth]", false), ("key = ~/student.key", true), ("user = 2023 1234", true),
            ("password-file = campus-password", true), ("hunter2-my-password", true), ("\u{1}", true), ("[keepalive]", false),
            ("warn-before = 2h", true), ("auto-relogin = maybe", true), ("logout-on-exit = 2", true), ("[location]", false),
            ("mode = sometimes", true), ("source = gps", true), ("[notifications]", false), ("notices = loud", true), ("[alerts]", false),
            ("quiet = 23:00", true), ("quiet-critical = sometimes", true), ("[probe]", false), ("mode = always", true),
            ("urls = https://connect.example.edu.cn/generate_204", true), ("urls = ,", true), ("[metrics]", false),
            ("textfile = /var/lib/prometheus/node-exporter/ccrelay.txt", true), ("[srun]", false), ("poll = 5", true),
            ("[relay]", false), ("ntfi = https://ntfy.sh/ccrelay-20231234", true), ("kinds = logged-out, loged-in", true),
            ("kinds = ,", true), ("ca-file = relay-ca.pem", true), ("ntfy = https://ntfy.sh/", true),
            ("gotify = https://gotify.example.edu.cn/message", true), ("webhook = http://hooks.example.edu.cn/ccrelay", true),
            ("forward = barrk://DEVICEKEY", true), ("forward = bark://DEVICEKEY/extra", true),
            ("forward = bark://bark.example.edu.cn/DEVICEKEY", true), ("forward = tgram://notatoken/987654321", true),
            ("forward = mailtos://20231234@smtp.qq.com/?to=a@qq.com", true), ("forward = mailtos://20231234:code@smtp.qq.com/", true),
            ("forward = mailtos://20231234", true), ("forward = mailtos://20231234:code@smtp.qq.com/?to=a@qq.com&from=nobody", true),
            ("forward = ntfy://ntfy.sh/ccrelay-20231234", true), ("forward = gotifys://gotify.example.edu.cn", true),
            ("forward = schan://SCT1/SCT2", true), ("forward = wecombot://", true), ("forward = dingtalk://TOKEN?secret=", true),
            ("forward = feishu://HOOK/ID", true), ("forward = pushplus://has space", true), ("forward = bark://KEY?token=x", true),
            ("forward = bark://KEY?proxy=ftp://127.0.0.1:1", true), ("forward = bark://KEY?limit=9/week", true),
            ("forward = bark://KEY?api=http://api.day.app", true), ("forward = bark://KEY?x", true), ("forward = no-scheme", true),
            ("forward = json://hooks.example.edu.cn/ccrelay", true), ("forward = bark://KEY0", false), ("forward = bark://KEY0", true),
        ] + (1...15).map { ("forward = bark://KEY\($0)", false) } + [("forward = bark://KEY16", true)]),
        BrokenFile(name: "srun", lines: [
            ("[server]", false), ("url = http://10.0.0.55/", true), ("protocol = srun", true), ("[auth]", false),
            ("certificate = ~/student.pem", true), ("[srun]", false), ("ac-id = x", true), ("domain = @c m", true), ("hmd5 = sha1", true),
            ("double-stack = maybe", true), ("poll = 5", true), ("logout = never", true),
        ]),
        BrokenFile(name: "no-url", lines: [("[auth]", false), ("user = 20231234", false)]),
        BrokenFile(name: "anonymous", lines: [("[server]", false), ("url = https://127.0.0.1:9/", false)], status: 0),
    ]

    @Test(arguments: brokenFiles)
    func aBrokenConfigurationIsReportedInChinese(_ file: BrokenFile) throws {
        let environment = isolated()
        let folder = environment["XDG_STATE_HOME"]! + "/bad"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/\(file.name).conf"
        try file.text.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o600)
        let checked = try run(Self.ccrelay, ["config", "check", "--config", path], environment: environment)
        #expect(checked.status == file.status, "\(checked.standardError)")
        for (index, line) in file.lines.enumerated() where line.wrong {
            #expect(checked.standardError.contains("\(path):\(index + 1): "), "line \(index + 1), \(line.text): \(checked.standardError)")
        }
        expectChinese(["config", "check"], checked)
        if file.status != 0 {
            let relay = try run(Self.ccrelay, ["relay", "test", "--config", path], environment: environment)
            #expect(relay.status == 1, "\(relay.standardError)")
            expectChinese(["relay", "test"], relay)
        }
    }

    /// What the checker finds in the files the configuration names (certificate, key, CA files, password
    /// file, interface) and in the file itself (its mode, its type, its encoding), in Chinese.
    @Test func theFileChecksAreReportedInChinese() throws {
        let environment = isolated()
        let folder = environment["XDG_STATE_HOME"]! + "/files"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let pki = TestPKI.shared
        func file(_ name: String, _ text: String, mode: mode_t = 0o600) throws -> String {
            let path = folder + "/" + name
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            chmod(path, mode)
            return path
        }
        let openKey = try file("open.key", String(contentsOfFile: pki.clientKey, encoding: .utf8), mode: 0o644)
        let notes = try file("notes.pem", "a note, not a certificate\n")
        let emptyPassword = try file("empty-password", "")
        let openPassword = try file("open-password", "hunter2\n", mode: 0o644)
        let server = "[server]\nurl = https://127.0.0.1:9/\n"
        func credentials(_ certificate: String, _ key: String? = nil) -> String {
            server + "[auth]\ncertificate = \(certificate)\n" + (key.map { "key = \($0)\n" } ?? "")
        }
        // Each file, the line its problem is on (0: the file as a whole) and its mode.
        let cases: [(name: String, text: String, line: Int, mode: mode_t)] = [
            ("missing-certificate", credentials(folder + "/none.pem", folder + "/none.key"), 4, 0o600),
            ("key-others-read", credentials(pki.clientCertificate, openKey), 5, 0o600),
            ("key-of-another", credentials(pki.clientCertificate, pki.strangerKey), 5, 0o600),
            ("key-with-passphrase", credentials(pki.clientCertificate, pki.encryptedKey), 5, 0o600),
            ("expired", credentials(pki.expiredCertificate, pki.expiredKey), 4, 0o600),
            ("certificate-folder", credentials(folder, pki.clientKey), 4, 0o600),
            ("certificate-without-key", credentials(pki.clientCertificate), 4, 0o600),
            ("certificate-not-pem", credentials(notes, pki.clientKey), 4, 0o600),
            ("bundle-without-keyring", credentials(pki.clientPKCS12), 4, 0o600),
            ("missing-ca", server + "ca-file = \(folder)/none-ca.pem\n", 3, 0o600),
            ("ca-not-pem", server + "ca-file = \(pki.clientKey)\n", 3, 0o600),
            ("no-interface", server + "interface = nosuch0\n", 3, 0o600),
            ("url-with-query", "[server]\nurl = https://127.0.0.1:9/?a=b\n", 2, 0o600),
            ("missing-password-file", server + "[auth]\nuser = 20231234\npassword-file = \(folder)/none\n", 5, 0o600),
            ("password-file-others-read", server + "[auth]\nuser = 20231234\npassword-file = \(openPassword)\n", 5, 0o600),
            ("empty-password-file", server + "[auth]\nuser = 20231234\npassword-file = \(emptyPassword)\n", 5, 0o600),
            ("missing-relay-ca", server + "[auth]\nuser = 20231234\n[relay]\nforward = bark://KEY\nca-file = \(folder)/none-ca.pem\n", 7, 0o600),
            ("portal-with-query", "[server]\nurl = http://10.0.0.55/?a=b\nprotocol = srun\n[auth]\nuser = 20231234\n", 2, 0o600),
            ("others-read", server, 0, 0o644),
        ]
        for (name, text, line, mode) in cases {
            let path = try file(name + ".conf", text, mode: mode)
            let result = try run(Self.ccrelay, ["config", "check", "--config", path], environment: environment)
            #expect(result.status == 1, "\(name): \(result.standardError)")
            #expect(result.standardError.contains(line > 0 ? "\(path):\(line): " : "\(path): "), "\(name): \(result.standardError)")
            expectChinese(["config", "check", name], result)
        }
        // Not a file, not text; and the system service's warning that no alert leaves the machine.
        let binary = folder + "/binary.conf"
        _ = FileManager.default.createFile(atPath: binary, contents: Data([0xFF, 0xFE, 0x0A]), attributes: [.posixPermissions: 0o600])
        for path in [folder, binary] {
            let result = try run(Self.ccrelay, ["config", "check", "--config", path], environment: environment)
            #expect(result.status == 1, "\(path): \(result.standardError)")
            expectChinese(["config", "check", path], result)
        }
        let system = try run(Self.ccrelay, ["--system", "config", "check", "--config", try file("service.conf", server + "[auth]\nuser = 20231234\n")],
                             environment: environment)
        #expect(system.status == 0 && system.standardError.contains("[relay]"), "\(system.standardError)")
        expectChinese(["--system", "config", "check"], system)
    }

    /// Setup refuses, in Chinese, a value the file cannot hold (before it tries anything).
    @Test(arguments: ["bark://KEY\u{1}", "", " bark://KEY", "#bark://KEY", "bark://KEY #x"])
    func setupRefusesAValueTheFileCannotHoldInChinese(_ forward: String) throws {
        let arguments = ["setup", "--server", "https://127.0.0.1:9/", "--protocol", "cc1", "--user", "20231234", "--password-stdin",
                         "--forward", forward]
        let result = try run(Self.ccrelay, arguments, environment: isolated(), input: "hunter2\n")
        #expect(result.status == 2 && result.standardError.contains("--forward"), "\(result.standardError)")
        expectChinese(arguments, result)
    }

    @Test func aRunningDaemonAnswersInChinese() async throws {
        let rig = try await DaemonRig(extraConfig: "[keepalive]\nauto-relogin = false", extraEnvironment: Self.chinese)
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        let commands: [[String]] = [["status"], ["badge"], ["history"], ["timeline"], ["login"]]
        for arguments in commands { expectChinese(arguments, try rig.cli(arguments, environment: Self.chinese)) }
        try rig.sim.control("POST", "kick", ["message": "下线"])
        #expect(await eventually(timeout: .seconds(20)) { rig.log.contains("state: logged-out") }, "\(rig.log)")
        let status = try rig.cli(["status"], environment: Self.chinese)
        #expect(status.standardOutput.contains("已注销"), "\(status.standardOutput)")
        // Machine interfaces keep their English names.
        let json = try rig.cli(["status", "--json"], environment: Self.chinese)
        #expect(json.standardOutput.contains("\"state\":\"logged-out\""), "\(json.standardOutput)")
        for arguments in commands + [["badge", "clear"], ["logout"]] {
            expectChinese(arguments, try rig.cli(arguments, environment: Self.chinese))
        }
    }

    @Test func everyAlertsBubbleIsChinese() async throws {
        let bus = try PrivateBus()
        let dunst = try await Dunst(on: bus)
        let environment = isolated().merging(["DBUS_SESSION_BUS_ADDRESS": bus.address]) { $1 }
        let result = try run(Self.ccrelay, ["notify-test"], environment: environment)
        #expect(result.status == 0, "\(result.standardError)")
        let bubbles = try dunst.closeAllAndReadHistory()
        #expect(bubbles.count == AlertKind.allCases.count)
        for bubble in bubbles {
            // The not-set-up bubble quotes the configuration checker (file:line: message).
            if let english = EnglishSentence.find(in: bubble.summary + "\n" + bubble.body) {
                Issue.record("the \(bubble.category) bubble: English reaches a zh_CN user: \(english)")
            }
        }
    }

    /// The first-login bubble: a daemon without a configuration, asked to show its status.
    @Test func theNotSetUpStatusBubbleIsChinese() async throws {
        let bus = try PrivateBus()
        let dunst = try await Dunst(on: bus)
        let environment = isolated().merging(["DBUS_SESSION_BUS_ADDRESS": bus.address]) { $1 }
        let missing = environment["HOME"]! + "/none/ccrelay.conf"
        let daemon = try ChildProcess(Self.ccrelay, ["daemon", "--config", missing], environment: environment)
        defer { daemon.stop() }
        #expect(await eventually(timeout: .seconds(20)) {
            (try? run(Self.ccrelay, ["status"], environment: environment))?.standardOutput.contains("尚未设置") == true
        })
        let status = try run(Self.ccrelay, ["status"], environment: environment)
        expectChinese(["status"], status)
        let shown = try run(Self.ccrelay, ["show"], environment: environment)
        #expect(shown.status == 0, "\(shown.standardError)")
        // The status bubble, and the not-set-up bubble a first login shows.
        let bubbles = try dunst.closeAllAndReadHistory()
        #expect(bubbles.contains { $0.category == "x-ccrelay.status" }, "\(bubbles.map(\.category))")
        for bubble in bubbles {
            if let english = EnglishSentence.find(in: bubble.summary + "\n" + bubble.body) {
                Issue.record("the \(bubble.category) bubble: English reaches a zh_CN user: \(english)")
            }
        }
    }

    @Test func theDetectorFindsASentenceAndPassesNamesAndCodes() {
        #expect(EnglishSentence.find(in: "ccrelay: status: the daemon is not running") != nil)
        #expect(EnglishSentence.find(in: "ccrelay: 守护进程没有运行；请运行 systemctl --user start ccrelay [timeout] /etc/ccrelay/ccrelay.conf") == nil)
        #expect(EnglishSentence.find(in: "试试 “ccrelay config check”。https://cc.example.edu.cn/login") == nil)
    }
}
