import CCRelayCore
import CoreVocabulary
import Forwarding
import Testing

/// `[relay]` in ccrelay.conf: the targets and their checks, and which alerts go out.
@Suite struct RelayConfigurationTests {
    func parse(_ text: String) -> ConfigurationParser.Result {
        ConfigurationParser.parse("[server]\nurl = https://cc.campus.example/\n" + text, file: "/c/ccrelay.conf", home: "/home/s", localize: .english)
    }

    /// Each line with the secret it holds: mistyped (no `://`, a wrong
    /// scheme, an option the scheme does not take, bad limit, a bad proxy,
    /// a line without `forward =`) or right.
    static let lines: [(String, String)] = [
        ("forward = schan//SCT9988776655TsecretKEY", "SCT9988776655TsecretKEY"),
        ("forward = shcan://SCT9988776655TsecretKEY", "SCT9988776655TsecretKEY"),
        ("forward = bark://Bk7dSecretDeviceKey22?sound=1", "Bk7dSecretDeviceKey22"),
        ("forward = bark:/Bk7dSecretDeviceKey22", "Bk7dSecretDeviceKey22"),
        ("forward = tgram://123456789:AAHsecretBotToken/-100987?limit=5/week", "AAHsecretBotToken"),
        ("forward = tgram://123456789:AAHsecretBotToken", "AAHsecretBotToken"),
        ("forward = dingtalk://tok3nSecretValue?secret=SECdingSigningSecret&x=1", "SECdingSigningSecret"),
        ("forward = dingtalk://tok3nSecretValue?secret=SECdingSigningSecret&x=1", "tok3nSecretValue"),
        ("forward = mailtos://me:MailPassw0rdSecret@smtp.qq.com/?to=", "MailPassw0rdSecret"),
        ("forward = mailtos://me:MailPassw0rdSecret@smtp.qq.com/?to=a@b.c&proxy=ftp://x", "MailPassw0rdSecret"),
        ("forward = pushplus://PushPlusSecretToken?proxy=ftp://user:ProxyPassSecret@127.0.0.1:1", "ProxyPassSecret"),
        ("forward = pushplus://PushPlusSecretToken?api=http://evil.example/PushPlusSecretToken", "PushPlusSecretToken"),
        ("bark://Bk7dSecretDeviceKey22", "Bk7dSecretDeviceKey22"),
        ("forward bark://Bk7dSecretDeviceKey22", "Bk7dSecretDeviceKey22"),
        ("ntfy = ftp://ntfy.sh/MyPrivateTopic_2023", "MyPrivateTopic_2023"),
        ("webhook = https://hooks.example/T0k3nPathSecret with space", "T0k3nPathSecret"),
        ("gotify = https://gotify.example/GotifyPathSecret", "GotifyPathSecret"),
        ("bark://Bk7dSecretDeviceKey22 = 1", "Bk7dSecretDeviceKey22"),
    ]

    @Test func anyNumberOfTargetsAndTheKindsAreRead() throws {
        let result = parse("""
            [relay]
            ntfy = https://ntfy.campus.example/ccrelay-20231234
            gotify = https://gotify.campus.example/message?token=AbC.123
            webhook = https://hooks.campus.example/ccrelay
            webhook = http://127.0.0.1:8080/second
            kinds = logged-out, notice, back-online
            ca-file = ~/campus-ca.pem
            """)
        #expect(result.errors.isEmpty, "\(result.errors)")
        #expect(result.warnings.filter { $0.line > 0 }.isEmpty, "\(result.warnings)")
        let c = try #require(result.configuration)
        #expect(c.forwardTargets.map(\.service.name) == ["ntfy", "gotify", "webhook", "webhook"])
        #expect(c.forwardTargets[1].displayName.hasPrefix("gotify https://gotify.campus.example #"), "the token's fingerprint alone (issue 31.8)")
        #expect(c.forwardSelection == ForwardSelection(kinds: [.loggedOut, .notice, .backOnline], criticalNotices: false))
        #expect(c.forwardCAFile == "/home/s/campus-ca.pem")
    }

    @Test func withoutARelayGroupNothingIsForwardedAndTheDefaultKindsAreTheIssuesFour() throws {
        let c = try #require(parse("").configuration)
        #expect(c.forwardTargets.isEmpty)
        let selection = c.forwardSelection
        for kind in [AlertKind.loggedOut, .keepAliveFailing, .credentials] {
            #expect(selection.forwards(Alert(kind: kind, title: "", body: "", urgency: .normal)))
        }
        #expect(selection.forwards(Alert(kind: .notice, title: "", body: "", urgency: .critical)))
        #expect(!selection.forwards(Alert(kind: .notice, title: "", body: "", urgency: .normal)))
        // Issue 33.3: a phone that heard of the trouble hears it is over.
        #expect(selection.forwards(Alert(kind: .backOnline, title: "", body: "", urgency: .low)))
        #expect(!selection.forwards(Alert(kind: .locationOff, title: "", body: "", urgency: .critical)))
        let everything = ForwardSelection(kinds: Set(AlertKind.allCases), criticalNotices: true)
        #expect(!everything.forwards(Alert(kind: .status, title: "", body: "", urgency: .low)), "the status bubble never leaves")
    }

    @Test func badTargetsAreErrorsNamingTheLineAndTheFix() {
        let cases: [(String, String)] = [
            ("ntfy = http://ntfy.campus.example/topic", "https://"),
            ("ntfy = https://ntfy.campus.example/", "topic"),
            ("ntfy = https://ntfy.campus.example/a topic", "https://"),
            ("ntfy = https://ntfy.campus.example/to.pic", "topic"),
            ("gotify = https://gotify.campus.example/message", "token"),
            ("webhook = ftp://hooks.campus.example/", "https://"),
            ("webhook = https:///nohost", "https://"),
            ("webhook = https://hooks.campus.example:99999/x", "https://"),
            ("webhook = https://hooks.campus.example:port/x", "https://"),
            ("webhook = https://hooks.campus.example/#frag", "https://"),
            ("kinds = logged-out, logedout", "did you mean 'logged-out'"),
            ("kinds = status", "unknown alert kind"),
            ("kinds = ,", "empty"),
        ]
        for (line, expected) in cases {
            let result = parse("[relay]\n" + line)
            #expect(result.configuration == nil, "\(line)")
            #expect(result.errors.first?.line == 4, "\(line): \(result.errors)")
            #expect(result.errors.first?.message.contains(expected) == true, "\(line): \(result.errors)")
        }
    }

    @Test func aSecretInAURLIsNeverInAMessage() {
        let result = parse("[relay]\ngotify = http://gotify.campus.example/message?token=TopSecret")
        #expect(result.errors.first?.message.contains("TopSecret") == false, "\(result.errors)")
        let target = try? ForwardTarget(key: "webhook", url: "https://user:pa55word@hooks.campus.example/x?key=K3y")
        let shown = target?.displayName ?? ""
        #expect(shown.hasPrefix("webhook https://hooks.campus.example #") && !shown.contains("K3y") && !shown.contains("pa55word") && !shown.contains("/x"),
                "the server and a fingerprint of the rest (issue 31.8): \(shown)")
    }

    @Test func anUnknownTargetTypeIsAWarningWithASuggestion() throws {
        let result = parse("[relay]\nntfi = https://ntfy.campus.example/t\nslack = https://hooks.slack.example/x")
        #expect(result.configuration != nil)
        let warnings = result.warnings.filter { $0.line > 0 }.map(\.message)
        #expect(warnings.count == 2)
        #expect(warnings[0].contains("unknown target type 'ntfi'") && warnings[0].contains("did you mean 'ntfy'?"), "\(warnings)")
        #expect(warnings[1].contains("known: ntfy, gotify, webhook"), "\(warnings)")
    }

    @Test func aForwardLineInTheConfigurationIsATargetAndMayRepeat() {
        let parsed = ConfigurationParser.parse("""
            [server]
            url = https://cc.campus.example/
            [relay]
            forward = bark://K1
            forward = tgram://1:A/2?proxy=http://127.0.0.1:3128
            forward = bark://K1
            """, file: "/c", home: "/h", localize: .english)
        #expect(parsed.errors.map(\.message) == ["this bark target is already listed (the same server and path or key; its alerts would share one queue)"])
        #expect(parsed.errors.first?.line == 6)
        let good = ConfigurationParser.parse("[server]\nurl = https://cc.campus.example/\n[relay]\nforward = bark://K1\nforward = schan://SCT1\n",
                                             file: "/c", home: "/h", localize: .english)
        #expect(good.configuration?.forwardTargets.map(\.service.name) == ["bark", "serverchan"])
        let keyed = ConfigurationParser.parse("[server]\nurl = https://cc.campus.example/\n[relay]\nbark = bark://K1\n", file: "/c", home: "/h", localize: .english)
        #expect(keyed.warnings.first?.message.contains("forward") == true, "\(keyed.warnings)")
    }

    @Test func aMistypedTargetLineNeverShowsItsSecret() {
        for (line, secret) in Self.lines {
            let text = "[server]\nurl = https://cc.example.edu.cn/\n[auth]\nuser = x\n[relay]\n\(line)\n"
            let result = ConfigurationParser.parse(text, file: "/etc/ccrelay/ccrelay.conf", home: "/root", localize: .english)
            let said = (result.errors + result.warnings).map(\.description).joined(separator: "\n")
            #expect(!said.isEmpty, "\(line) is refused or warned about: \(result.configuration?.forwardTargets.map(\.url) ?? [])")
            #expect(!said.contains(secret), "\(line) → \(said)")
        }
    }

    @Test func aLineInTheAuthGroupWithoutAnEqualsSignIsNotShown() {
        let result = ConfigurationParser.parse("[auth]\nuser = 20231234\nhunter2-my-password\n", file: "f", home: "/root", localize: .english)
        let said = result.errors.map(\.description).joined(separator: "\n")
        #expect(said.contains("f:3") && !said.contains("hunter2"), "\(said)")
    }
}
