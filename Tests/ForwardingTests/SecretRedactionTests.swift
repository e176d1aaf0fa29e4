import CoreVocabulary
import Testing
@testable import Forwarding

/// No secret shown where others read (issue 31.8): a typo in a `forward =`
/// line, an ntfy topic or a webhook's path token never reaches `config
/// check`, the log or a status everyone reads; the account is not in the
/// system service's `last_error`.
struct SecretRedactionTests {
    @Test func keyedTargetsAreShownByServerAndFingerprint() throws {
        let cases: [(ForwardTarget, String, String)] = [
            (try ForwardTarget(key: "ntfy", url: "https://ntfy.sh/MyPrivateTopic_2023"), "MyPrivateTopic_2023", "ntfy https://ntfy.sh #"),
            (try ForwardTarget(key: "gotify", url: "https://gotify.example/message?token=AppTok3nSecret"), "AppTok3nSecret", "gotify https://gotify.example #"),
            (try ForwardTarget(key: "webhook", url: "https://hooks.example/services/T0k3nPathSecret"), "T0k3nPathSecret", "webhook https://hooks.example #"),
            (try ForwardTarget(key: "webhook", url: "https://user:BasicPassSecret@hooks.example/"), "BasicPassSecret", "webhook https://hooks.example #"),
            (try ForwardTarget(forward: "ntfys://ntfy.sh/MyPrivateTopic_2023"), "MyPrivateTopic_2023", "ntfy https://ntfy.sh #"),
        ]
        for (target, secret, shown) in cases {
            #expect(target.displayName.hasPrefix(shown) && !target.displayName.contains(secret), "\(target.displayName)")
            #expect(!target.description.contains(secret))
        }
        #expect(try ForwardTarget(key: "ntfy", url: "https://ntfy.sh/a").displayName
                != ForwardTarget(key: "ntfy", url: "https://ntfy.sh/b").displayName, "two topics are told apart")
    }

    @Test func barkTakesAServerOnlyWhenItLooksLikeOne() throws {
        #expect(throws: ForwardTargetProblem.self) { try ForwardTarget(forward: "bark://Bk7dSecretDeviceKey22/extra") }
        do {
            _ = try ForwardTarget(forward: "bark://Bk7dSecretDeviceKey22/extra")
        } catch {
            #expect(!error.description.contains("Bk7dSecretDeviceKey22"), "\(error)")
        }
        #expect(try ForwardTarget(forward: "barks://bark.campus.example/K").push?.base == "https://bark.campus.example")
        #expect(try ForwardTarget(forward: "barks://127.0.0.1:8080/K").push?.base == "https://127.0.0.1:8080")
        #expect(try ForwardTarget(forward: "barks://localhost:8080/K").push?.base == "https://localhost:8080")
    }

    @Test func redactedShowsAnHTTPServerAndOtherSchemesByName() {
        #expect(TargetURL.redacted("https://u:p@ntfy.sh:8443/topic?x=1", localize: .english) == "https://…@ntfy.sh:8443/…")
        #expect(TargetURL.redacted("https://ntfy.sh", localize: .english) == "https://ntfy.sh")
        #expect(TargetURL.redacted("bark://KEY/x", localize: .english) == "bark://…")
        #expect(TargetURL.redacted("SCT123", localize: .english) == "(6 characters, not shown)")
        #expect(TargetURL.redacted("\u{1B}[31m://x", localize: .english) == "(a scheme)://…")
    }
}

/// Apprise's URLs as docs/forwarding.md promises (issue 33.8): its scheme→transport
/// rule for every scheme, ccrelay's "plain http only to loopback" kept with
/// an error that names the `…s://` form, the keyless Bark shorthand kept.
struct AppriseURLTests {
    @Test func barkAndBarksFollowAppriseAndTheKeyAloneIsThePublicServer() throws {
        #expect(try ForwardTarget(forward: "bark://DeviceKey123").push?.base == "https://api.day.app")
        #expect(try ForwardTarget(forward: "barks://DeviceKey123").push?.base == "https://api.day.app")
        #expect(try ForwardTarget(forward: "barks://bark.campus.example:8443/K").push?.base == "https://bark.campus.example:8443")
        #expect(try ForwardTarget(forward: "bark://127.0.0.1:8080/K").push?.base == "http://127.0.0.1:8080", "plain http to a loopback address")
        do {
            _ = try ForwardTarget(forward: "bark://bark.campus.example:8443/K")
            Issue.record("plain http to a campus server was taken")
        } catch {
            #expect(error.description.contains("barks://bark.campus.example/DEVICE_KEY"), "\(error)")
        }
    }

    @Test func ntfyGotifyAndJsonNameTheirSecureFormWhenPlainHTTPCannotGo() throws {
        #expect(try ForwardTarget(forward: "ntfys://ntfy.sh/topic").url == "https://ntfy.sh/topic")
        #expect(try ForwardTarget(forward: "ntfy://127.0.0.1:8080/topic").url == "http://127.0.0.1:8080/topic")
        for (url, secure) in [("ntfy://ntfy.sh/topic", "ntfys://"), ("gotify://g.example/TOKEN", "gotifys://"), ("json://hooks.example/x", "jsons://")] {
            do {
                _ = try ForwardTarget(forward: url)
                Issue.record("\(url) was taken")
            } catch {
                #expect(error.description.contains(secure) && error.description.contains("Apprise"), "\(url): \(error)")
            }
        }
    }
}
