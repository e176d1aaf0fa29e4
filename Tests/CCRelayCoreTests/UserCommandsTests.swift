@testable import CCRelayCore
import CoreVocabulary
import Testing

/// The system service's texts name its own commands (issue 31.14): no
/// keyring to save a password in, its files root's to change.
struct UserCommandsTests {
    @Test func theSystemServiceNamesItsOwnCommands() {
        let text = "Save the right password with: ccrelay login --save-password. Or run ccrelay setup --edit; then ccrelay login."
        #expect(UserCommands.desktop.rewrite(text) == text)
        #expect(UserCommands(systemInstance: "").rewrite(text)
            == "Save the right password with: sudo ccrelay --system setup --edit. Or run sudo ccrelay --system setup --edit; then ccrelay --system login.")
        #expect(UserCommands(systemInstance: "lab").rewrite("ccrelay relay test, ccrelay history, ccrelay setupx")
            == "sudo ccrelay --system=lab relay test, ccrelay --system=lab history, ccrelay setupx", "whole commands only")
    }

    @Test func theSystemServicesAlertsAndNotSetUpSentenceSayThem() {
        var configuration = CoreRig.configuration
        configuration.user = "20231234"
        var core = DaemonCore(reading: .usable(configuration), path: "/etc/ccrelay/ccrelay.conf", localizer: .english,
                              commands: UserCommands(systemInstance: ""))
        _ = core.handle(.started(DaemonStart(wallClock: 1_780_000_000)), at: Instant(sinceBoot: .seconds(10)))
        let effects = core.handle(.loginAnswered(LoginResult(grant: nil, problem: nil, droppedNotices: 0, answer: .refused(.badPassword, message: nil))),
                                  at: Instant(sinceBoot: .seconds(11)))
        let shown = effects.compactMap { if case .show(let alert) = $0 { alert } else { nil } }
        #expect(shown.first?.body.contains("sudo ccrelay --system setup --edit") == true && shown.first?.body.contains("--save-password") == false,
                "\(shown)")
        let unconfigured = DaemonCore(reading: ConfigurationReading(usable: nil, problems: [], exists: false, credentialFiles: []),
                                      path: "/etc/ccrelay/ccrelay.conf", localizer: .english, commands: UserCommands(systemInstance: "lab"))
        let sentence = unconfigured.snapshot(at: Instant(sinceBoot: .zero)).problem?.sentence ?? ""
        #expect(sentence.hasPrefix("Not set up: run sudo ccrelay --system=lab setup"), "\(sentence)")
    }
}
