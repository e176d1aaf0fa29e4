@testable import CCRelayCore
import Testing

/// No secret shown where others read (issue 31.8): a typo in a `forward =`
/// line, an ntfy topic or a webhook's path token never reaches `config
/// check`, the log or a status everyone reads; the account is not in the
/// system service's `last_error`.
struct SecretRedactionTests {
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

    @Test func aMistypedTargetLineNeverShowsItsSecret() {
        for (line, secret) in Self.lines {
            let text = "[server]\nurl = https://cc.example.edu.cn/\n[auth]\nuser = x\n[relay]\n\(line)\n"
            let result = ConfigurationParser.parse(text, file: "/etc/ccrelay/ccrelay.conf", home: "/root")
            let said = (result.errors + result.warnings).map(\.description).joined(separator: "\n")
            #expect(!said.isEmpty, "\(line) is refused or warned about: \(result.configuration?.relayTargets.map(\.url) ?? [])")
            #expect(!said.contains(secret), "\(line) → \(said)")
        }
    }

    @Test func aLineInTheAuthGroupWithoutAnEqualsSignIsNotShown() {
        let result = ConfigurationParser.parse("[auth]\nuser = 20231234\nhunter2-my-password\n", file: "f", home: "/root")
        let said = result.errors.map(\.description).joined(separator: "\n")
        #expect(said.contains("f:3") && !said.contains("hunter2"), "\(said)")
    }

    @Test func keyedTargetsAreShownByServerAndFingerprint() throws {
        let cases: [(RelayTarget, String, String)] = [
            (try RelayTarget(service: .ntfy, url: "https://ntfy.sh/MyPrivateTopic_2023"), "MyPrivateTopic_2023", "ntfy https://ntfy.sh #"),
            (try RelayTarget(service: .gotify, url: "https://gotify.example/message?token=AppTok3nSecret"), "AppTok3nSecret", "gotify https://gotify.example #"),
            (try RelayTarget(service: .webhook, url: "https://hooks.example/services/T0k3nPathSecret"), "T0k3nPathSecret", "webhook https://hooks.example #"),
            (try RelayTarget(service: .webhook, url: "https://user:BasicPassSecret@hooks.example/"), "BasicPassSecret", "webhook https://hooks.example #"),
            (try RelayTarget(forward: "ntfys://ntfy.sh/MyPrivateTopic_2023"), "MyPrivateTopic_2023", "ntfy https://ntfy.sh #"),
        ]
        for (target, secret, shown) in cases {
            #expect(target.displayName.hasPrefix(shown) && !target.displayName.contains(secret), "\(target.displayName)")
            #expect(!target.description.contains(secret))
        }
        #expect(try RelayTarget(service: .ntfy, url: "https://ntfy.sh/a").displayName
                != RelayTarget(service: .ntfy, url: "https://ntfy.sh/b").displayName, "two topics are told apart")
    }

    @Test func barkTakesAServerOnlyWhenItLooksLikeOne() throws {
        #expect(throws: RelayTargetProblem.self) { try RelayTarget(forward: "bark://Bk7dSecretDeviceKey22/extra") }
        do {
            _ = try RelayTarget(forward: "bark://Bk7dSecretDeviceKey22/extra")
        } catch {
            #expect(!error.description.contains("Bk7dSecretDeviceKey22"), "\(error)")
        }
        #expect(try RelayTarget(forward: "barks://bark.campus.example/K").push?.base == "https://bark.campus.example")
        #expect(try RelayTarget(forward: "barks://127.0.0.1:8080/K").push?.base == "https://127.0.0.1:8080")
        #expect(try RelayTarget(forward: "barks://localhost:8080/K").push?.base == "https://localhost:8080")
    }

    @Test func redactedShowsAnHTTPServerAndOtherSchemesByName() {
        #expect(RelayURL.redacted("https://u:p@ntfy.sh:8443/topic?x=1") == "https://…@ntfy.sh:8443/…")
        #expect(RelayURL.redacted("https://ntfy.sh") == "https://ntfy.sh")
        #expect(RelayURL.redacted("bark://KEY/x") == "bark://…")
        #expect(RelayURL.redacted("SCT123") == "(6 characters, not shown)")
        #expect(RelayURL.redacted("\u{1B}[31m://x") == "(a scheme)://…")
    }
}

/// Apprise's URLs as docs/forwarding.md promises (issue 33.8): its scheme→transport
/// rule for every scheme, ccrelay's "plain http only to loopback" kept with
/// an error that names the `…s://` form, the keyless Bark shorthand kept.
struct AppriseURLTests {
    @Test func barkAndBarksFollowAppriseAndTheKeyAloneIsThePublicServer() throws {
        #expect(try RelayTarget(forward: "bark://DeviceKey123").push?.base == "https://api.day.app")
        #expect(try RelayTarget(forward: "barks://DeviceKey123").push?.base == "https://api.day.app")
        #expect(try RelayTarget(forward: "barks://bark.campus.example:8443/K").push?.base == "https://bark.campus.example:8443")
        #expect(try RelayTarget(forward: "bark://127.0.0.1:8080/K").push?.base == "http://127.0.0.1:8080", "plain http to a loopback address")
        do {
            _ = try RelayTarget(forward: "bark://bark.campus.example:8443/K")
            Issue.record("plain http to a campus server was taken")
        } catch {
            #expect(error.description.contains("barks://bark.campus.example/DEVICE_KEY"), "\(error)")
        }
    }

    @Test func ntfyGotifyAndJsonNameTheirSecureFormWhenPlainHTTPCannotGo() throws {
        #expect(try RelayTarget(forward: "ntfys://ntfy.sh/topic").url == "https://ntfy.sh/topic")
        #expect(try RelayTarget(forward: "ntfy://127.0.0.1:8080/topic").url == "http://127.0.0.1:8080/topic")
        for (url, secure) in [("ntfy://ntfy.sh/topic", "ntfys://"), ("gotify://g.example/TOKEN", "gotifys://"), ("json://hooks.example/x", "jsons://")] {
            do {
                _ = try RelayTarget(forward: url)
                Issue.record("\(url) was taken")
            } catch {
                #expect(error.description.contains(secure) && error.description.contains("Apprise"), "\(url): \(error)")
            }
        }
    }
}
