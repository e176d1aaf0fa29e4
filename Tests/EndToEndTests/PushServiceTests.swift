import Foundation
import TestSupport
import Testing

/// The push services end to end (issue 26): `ccrelay relay test` through
/// the daemon's own request code against a loopback recorder per service
/// (HTTPS with the test CA) that checks what the real service checks —
/// fields and their types, DingTalk's and Feishu's signatures recomputed from
/// the secret, Bark's payload limit — and answers as it does. Only the
/// server differs from production (`api=`, or Bark's own host).
@Suite(.desktopBudget) struct PushServiceTests {
    struct Services {
        let bark: RelayRecorder
        let serverchan: RelayRecorder
        let pushplus: RelayRecorder
        let wecom: RelayRecorder
        let dingtalk: RelayRecorder
        let feishu: RelayRecorder
        let telegram: RelayRecorder
        var all: [RelayRecorder] { [bark, serverchan, pushplus, wecom, dingtalk, feishu, telegram] }

        init(serverChan behave: String = "normal") throws {
            bark = try RelayRecorder(.bark, token: "BarkDeviceKey123", tls: true)
            serverchan = try RelayRecorder(.serverchan, token: "SCT123456TabcdefABCDEF", tls: true, behave: behave)
            pushplus = try RelayRecorder(.pushplus, token: "pp0123456789abcdef", tls: true)
            wecom = try RelayRecorder(.wecom, token: "693a91f6-7aaa-4bbb-8ccc", tls: true)
            dingtalk = try RelayRecorder(.dingtalk, token: "dt0123456789abcdef", secret: "SECd1n6ta1k5ecret", tls: true)
            feishu = try RelayRecorder(.feishu, token: "fs-hook-0123456789", secret: "feishu-s1gning-secret", tls: true)
            telegram = try RelayRecorder(.telegram, token: "123456789:AAHbotTokenXYZ", chat: "987654321", tls: true)
        }

        /// `api=` for a recorder.
        static func api(_ recorder: RelayRecorder) -> String { "api=https://127.0.0.1:\(recorder.port)" }
    }

    /// A configuration with these `[relay]` lines (0600, the test CA for the targets); its path.
    static func configuration(_ relay: [String]) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-push-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/ccrelay.conf"
        try ("[server]\nurl = https://cc.campus.example/\n[probe]\nmode = off\n[relay]\nca-file = \(TestPKI.shared.caCertificate)\n"
            + relay.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o600)
        return path
    }

    static func relayTest(_ path: String) throws -> CommandResult {
        try run(DaemonRig.ccrelay, ["relay", "test", "--config", path], environment: [
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus", "LANGUAGE": "en", "LC_ALL": "C.UTF-8",
        ])
    }

    @Test func eachServiceTakesTheRequestItDocuments() throws {
        let services = try Services()
        let path = try Self.configuration([
            "forward = barks://127.0.0.1:\(services.bark.port)/BarkDeviceKey123",
            "forward = schan://SCT123456TabcdefABCDEF?\(Services.api(services.serverchan))",
            "forward = pushplus://pp0123456789abcdef?\(Services.api(services.pushplus))",
            "forward = wecombot://693a91f6-7aaa-4bbb-8ccc?\(Services.api(services.wecom))",
            "forward = dingtalk://dt0123456789abcdef?secret=SECd1n6ta1k5ecret&\(Services.api(services.dingtalk))",
            "forward = feishu://fs-hook-0123456789?secret=feishu-s1gning-secret&\(Services.api(services.feishu))",
            "forward = tgram://123456789:AAHbotTokenXYZ/987654321?\(Services.api(services.telegram))",
        ])
        let result = try Self.relayTest(path)
        let output = result.standardOutput + result.standardError
        #expect(result.status == 0, "\(output)")
        for (name, recorder) in zip(["Bark", "ServerChan", "PushPlus", "WeCom", "DingTalk", "Feishu", "Telegram"], services.all) {
            #expect(recorder.requests().count == 1 && recorder.problems().isEmpty, "\(name): \(recorder.problems()) \(recorder.requests())")
            #expect(output.contains("\(name) 127.0.0.1:\(recorder.port) #") && output.contains("delivered (HTTP 200)"), "\(output)")
        }
        let bark = RelayRecorder.body(services.bark.requests()[0])
        #expect(bark["level"] as? String == "timeSensitive" && bark["group"] as? String == "ccrelay", "a test is of normal urgency: \(bark)")
        #expect(RelayRecorder.body(services.telegram.requests()[0])["disable_notification"] as? Bool == false)
        #expect((services.dingtalk.requests()[0]["query"] as? String)?.contains("sign=") == true, "signed")
        for key in ["BarkDeviceKey123", "SCT123456TabcdefABCDEF", "pp0123456789abcdef", "AAHbotTokenXYZ", "SECd1n6ta1k5ecret", "feishu-s1gning-secret"] {
            #expect(!output.contains(key), "\(key) shows in: \(output)")
        }
    }

    @Test func aRefusalIsReportedInTheServicesOwnWordsWithoutItsSecrets() throws {
        let services = try Services(serverChan: "quota")
        let path = try Self.configuration([
            // A device the server does not know (Bark echoes the key back: it must not show).
            "forward = barks://127.0.0.1:\(services.bark.port)/WrongDeviceKey999",
            "forward = schan://SCT123456TabcdefABCDEF?\(Services.api(services.serverchan))",
            "forward = dingtalk://dt0123456789abcdef?secret=NotTheSecret&\(Services.api(services.dingtalk))",
            "forward = feishu://fs-hook-0123456789?secret=NotTheSecretEither&\(Services.api(services.feishu))",
            "forward = tgram://123456789:AAHbotTokenXYZ/111?\(Services.api(services.telegram))",
            "forward = pushplus://pp0123456789abcdef?api=https://127.0.0.1:1",
        ])
        let result = try Self.relayTest(path)
        let output = result.standardOutput
        #expect(result.status == 1, "\(output)\(result.standardError)")
        func line(_ service: String) -> String { output.split(separator: "\n").first { $0.hasPrefix(service + " ") }.map(String.init) ?? "" }
        #expect(line("Bark").contains("refused: Bark: failed to get device token") && !output.contains("WrongDeviceKey999"), "\(output)")
        #expect(line("ServerChan").contains("refused: ServerChan: 今日免费额度已用完 (code 40001, HTTP 200)"), "\(output)")
        #expect(line("DingTalk").contains("refused: DingTalk: sign not match"), "\(output)")
        #expect(line("Feishu").contains("refused: Feishu: sign match fail"), "\(output)")
        #expect(line("Telegram").contains("refused: Telegram: Bad Request: chat not found (error 400, HTTP 400)"), "\(output)")
        #expect(line("PushPlus").contains("unreachable:"), "\(output)")
        #expect(services.dingtalk.problems() == ["bad sign"] && services.feishu.problems() == ["bad sign"], "the recorders recomputed the signatures")
    }

    /// Mail through libcurl's SMTP (QQ Mail's way: a login and an authorization
    /// code): verified TLS, implicit or by STARTTLS (never plain), a message
    /// Python's email package parses with its UTF-8 subject decoded.
    @Test(arguments: ["implicit", "starttls"])
    func aMailGoesOutOverVerifiedTLSAndParses(_ tls: String) throws {
        let server = try SMTPRecorder(tls: tls, user: "12345", password: "app@code:1")
        let scheme = tls == "implicit" ? "mailtos" : "mailto"
        let path = try Self.configuration(["forward = \(scheme)://12345:app%40code%3A1@127.0.0.1:\(server.port)/?to=me@campus.example"])
        let result = try Self.relayTest(path)
        #expect(result.status == 0 && result.standardOutput.contains("E-mail 127.0.0.1:\(server.port) #"), "\(result.standardOutput)\(result.standardError)")
        #expect(result.standardOutput.contains("delivered (SMTP 250)"), "\(result.standardOutput)")
        let message = try #require(server.messages().first)
        #expect(message["tls"] as? Bool == true)
        #expect(message["subject"] as? String == "CC Relay test message", "\(message)")
        #expect(message["mail_from"] as? String == "12345@127.0.0.1" && message["rcpt_tos"] as? [String] == ["me@campus.example"], "\(message)")
        #expect((message["text"] as? String)?.contains("Alerts from") == true && message["charset"] as? String == "utf-8", "\(message)")
        #expect(message["date"] is String, "a Date the email package parses: \(message)")
        #expect((message["message_id"] as? String)?.wholeMatch(of: /<[^@<>]+@ccrelay\.[^<>]+>/) != nil, "\(message)")
        #expect(!result.standardOutput.contains("app@code") && !result.standardOutput.contains("app%40code"))
    }

    @Test func aRefusedLoginIsARefusalAndAnUnreachableServerIsNot() throws {
        let server = try SMTPRecorder(tls: "implicit", user: "12345", password: "right")
        let path = try Self.configuration([
            "forward = mailtos://12345:wrong-password@127.0.0.1:\(server.port)/?to=me@campus.example",
            "forward = mailtos://12345:p@127.0.0.1:1/?to=other@campus.example",
        ])
        let result = try Self.relayTest(path)
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        #expect(result.status == 1)
        #expect(lines.contains { $0.contains("127.0.0.1:\(server.port)") && $0.contains("refused: E-mail:") && $0.contains("(SMTP 535)") }, "\(lines)")
        #expect(lines.contains { $0.contains("127.0.0.1:1 ") && $0.contains("unreachable:") }, "\(lines)")
        #expect(!result.standardOutput.contains("wrong-password"))
        #expect(server.messages().isEmpty)
    }

    /// A daemon forwarding to `server` (login 12345, password code), online, then kicked out.
    static func kicked(mailingTo server: SMTPRecorder, scheme: String) async throws -> DaemonRig {
        let rig = try await DaemonRig(extraConfig: """
            [relay]
            forward = \(scheme)://12345:code@127.0.0.1:\(server.port)/?to=me@campus.example
            ca-file = \(TestPKI.shared.caCertificate)
            """)
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        try rig.sim.control("POST", "kick", ["message": "你已被管理员下线"])
        return rig
    }

    /// A mail the server answered "try again later" (451) goes again after
    /// the back-off with the same Message-ID (the alert's idempotency key), marked late.
    @Test func aRetriedMailKeepsItsMessageID() async throws {
        let server = try SMTPRecorder(tls: "starttls", user: "12345", password: "code", tempfailFirst: 1)
        let rig = try await Self.kicked(mailingTo: server, scheme: "mailto")
        #expect(await eventually(timeout: .seconds(40)) { server.messages().count >= 2 }, "\(server.messages())\n\(rig.log)")
        let messages = server.messages()
        #expect(messages.map { $0["answered"] as? Bool } == [false, true], "\(messages)")
        #expect(messages[0]["message_id"] as? String == messages[1]["message_id"] as? String, "\(messages)")
        #expect(messages[1]["subject"] as? String == "Logged out of the campus network", "\(messages)")
        #expect((messages[1]["text"] as? String)?.contains("Delayed: raised at") == true, "marked late: \(messages)")
        #expect(!rig.log.contains("code@"), "the login's password is not logged")
    }

    /// `proxy=` (issue 26: Telegram needs one from China): that target goes
    /// through it — an HTTP CONNECT tunnel, or SOCKS5 with the name resolved
    /// by the proxy — with TLS to the service inside; a target without one
    /// goes straight, whatever proxy the environment names.
    @Test(arguments: ["http", "socks5h"])
    func aTargetsOwnProxyCarriesItAndTheEnvironmentsIsIgnored(_ kind: String) throws {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures").path
        let record = FileManager.default.temporaryDirectory.appendingPathComponent("proxy-\(UUID().uuidString)").path
        let proxy = try ChildProcess("/usr/bin/python3", [fixtures + "/connect_proxy.py", "--record", record] + (kind == "socks5h" ? ["--socks5"] : []))
        defer { try? FileManager.default.removeItem(atPath: record) }
        let proxyPort = try #require(proxy.readLine().flatMap { $0.hasPrefix("port=") ? Int($0.dropFirst(5)) : nil })
        let telegram = try RelayRecorder(.telegram, token: "123456789:AAHbotTokenXYZ", chat: "987654321", tls: true)
        let bark = try RelayRecorder(.bark, token: "BarkDeviceKey123", tls: true)
        let path = try Self.configuration([
            "forward = tgram://123456789:AAHbotTokenXYZ/987654321?\(Services.api(telegram))&proxy=\(kind)://127.0.0.1:\(proxyPort)",
            "forward = barks://127.0.0.1:\(bark.port)/BarkDeviceKey123",
        ])
        let result = try run(DaemonRig.ccrelay, ["relay", "test", "--config", path], environment: [
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus", "https_proxy": "http://127.0.0.1:1", "HTTPS_PROXY": "http://127.0.0.1:1",
            "ALL_PROXY": "http://127.0.0.1:1",
        ])
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        #expect(telegram.requests().count == 1 && bark.requests().count == 1)
        let tunnels = ((try? String(contentsOfFile: record, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        #expect(tunnels == ["127.0.0.1:\(telegram.port)"], "only Telegram went through the proxy: \(tunnels)")
        proxy.stop()
    }

    /// A kick with five targets, one of each family — ntfy, Bark, mail, a
    /// webhook that is down, ServerChan over its budget —: each gets exactly
    /// what the rules say, once.
    @Test func aKickReachesFiveTargetsEachAsItsRulesSay() async throws {
        let ntfy = try RelayRecorder(.ntfy)
        let bark = try RelayRecorder(.bark, token: "BarkDeviceKey123", tls: true)
        let serverchan = try RelayRecorder(.serverchan, token: "SCT123456TabcdefABCDEF", tls: true)
        let mail = try SMTPRecorder(tls: "implicit", user: "12345", password: "code")
        let rig = try await DaemonRig(extraConfig: """
            [relay]
            ntfy = http://127.0.0.1:\(ntfy.port)/ccrelay-five
            forward = barks://127.0.0.1:\(bark.port)/BarkDeviceKey123
            forward = schan://SCT123456TabcdefABCDEF?\(Services.api(serverchan))&limit=1/hour
            forward = mailtos://12345:code@127.0.0.1:\(mail.port)/?to=me@campus.example
            webhook = http://127.0.0.1:9/down
            kinds = logged-out, notice
            ca-file = \(TestPKI.shared.caCertificate)
            """)
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        // A notice first: it spends ServerChan's one message of the hour.
        try rig.sim.control("POST", "notice", ["id": "n-five", "title": "停电通知", "body": "今晚维护", "urgency": "normal"])
        #expect(await eventually(timeout: .seconds(20)) { serverchan.requests().count == 1 && ntfy.requests().count == 1 }, "\(rig.log)")
        try rig.sim.control("POST", "kick", ["message": "你已被管理员下线"])
        #expect(await eventually(timeout: .seconds(20)) {
            ntfy.requests().count == 2 && bark.requests().count == 2 && mail.messages().count == 2
        }, "\(rig.log)")
        func status() -> [[String: Any]] {
            let output = (try? rig.cli(["status", "--json"]).standardOutput) ?? ""
            return ((try? JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])?["relay"] as? [[String: Any]]) ?? []
        }
        func entry(_ prefix: String) -> [String: Any]? { status().first { ($0["target"] as? String)?.hasPrefix(prefix) == true } }
        #expect(await eventually { entry("ServerChan")?["held"] as? String == "budget" }, "\(status())")
        #expect(entry("ServerChan")?["budget_left"] as? Int == 0 && entry("ServerChan")?["queued"] as? Int == 1)
        #expect(entry("webhook")?["queued"] as? Int == 2 && (entry("webhook")?["last_error"] as? String)?.isEmpty == false, "\(status())")
        try await Task.sleep(for: .seconds(2))
        #expect(serverchan.requests().count == 1, "over its budget: the logout waits for the next slot, in a digest")
        #expect(ntfy.requests().count == 2 && bark.requests().count == 2 && mail.messages().count == 2, "each once")
        #expect(bark.problems().isEmpty && serverchan.problems().isEmpty)
        #expect(RelayRecorder.body(bark.requests()[1])["level"] as? String == "critical", "a logout is critical on Bark")
    }

    /// kill -9 while the mail server holds the message: after the restart the
    /// mail goes again with the same Message-ID, marked late, and only once.
    @Test func killDashNineDuringAMailSendsItAgainWithTheSameMessageID() async throws {
        let server = try SMTPRecorder(tls: "implicit", user: "12345", password: "code", hangFirst: 1)
        let rig = try await Self.kicked(mailingTo: server, scheme: "mailtos")
        #expect(await eventually(timeout: .seconds(20)) { server.messages().count == 1 }, "\(rig.log)")
        rig.daemon.stop(signal: SIGKILL)
        _ = rig.daemon.wait()
        let again = try rig.startDaemon(logPath: rig.logPath + ".2")
        defer { again.stop() }
        #expect(await eventually(timeout: .seconds(30)) { server.messages().count == 2 }, "\(rig.log)")
        let messages = server.messages()
        #expect(messages[0]["message_id"] as? String == messages[1]["message_id"] as? String, "\(messages)")
        #expect(messages[1]["answered"] as? Bool == true && (messages[1]["text"] as? String)?.contains("Delayed: raised at") == true)
        try await Task.sleep(for: .seconds(3))
        #expect(server.messages().count == 2, "once delivered, never again")
    }
}

