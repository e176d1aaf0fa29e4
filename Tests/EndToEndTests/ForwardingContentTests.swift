import Foundation
import TestSupport
import Testing

/// A message a service cannot take for its content never silences it
/// (issue 31.6), with the real daemon, ccsim, and recorders that count and
/// refuse as the real services do: Telegram counts UTF-16 units, a mail
/// server refuses a line over 998 octets and can refuse a message at its end.
@Suite(.desktopBudget) struct ForwardingContentTests {
    /// A daemon forwarding notices and logouts with `relay` lines, online.
    static func daemon(_ relay: String) async throws -> DaemonRig {
        let rig = try await DaemonRig(extraConfig: """
            [relay]
            \(relay)
            kinds = logged-out, notice
            ca-file = \(TestPKI.shared.caCertificate)
            """)
        #expect(await eventually(timeout: .seconds(20)) { rig.acceptedReports() >= 1 }, "\(rig.log)")
        return rig
    }

    @Test func aNoticeOfOver4096UTF16UnitsReachesTelegramAndTheLogoutFollows() async throws {
        let telegram = try RelayRecorder(.telegram, token: "123456789:AAHbotTokenXYZ", chat: "987654321", tls: true)
        let rig = try await Self.daemon("forward = tgram://123456789:AAHbotTokenXYZ/987654321?api=https://127.0.0.1:\(telegram.port)")
        // 400 families (man, woman, girl, boy joined): 400 characters, 4,400 UTF-16 units — under 4,096 characters.
        let family = "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}\u{200D}\u{1F466}"
        try rig.sim.control("POST", "notice", ["id": "n-long", "title": "通知", "body": String(repeating: family, count: 400), "urgency": "normal"])
        #expect(await eventually(timeout: .seconds(20)) { telegram.requests().count >= 1 }, "\(rig.log)")
        try rig.sim.control("POST", "kick", ["message": "你已被管理员下线"])
        #expect(await eventually(timeout: .seconds(20)) { telegram.requests().count == 2 }, "\(telegram.problems())\n\(rig.log)")
        #expect(telegram.problems().isEmpty, "Telegram took both: \(telegram.problems())")
        let logout = RelayRecorder.body(telegram.requests()[1])["text"] as? String ?? ""
        #expect(logout.contains("Logged out of the campus network"), "\(logout)")
    }

    @Test func aMailRefusedForItsContentIsGivenUpAndTheLogoutGoesOut() async throws {
        let mail = try SMTPRecorder(tls: "implicit", user: "12345", password: "code", rejectFirst: 1)
        let rig = try await Self.daemon("forward = mailtos://12345:code@127.0.0.1:\(mail.port)/?to=me@campus.example")
        try rig.sim.control("POST", "notice", ["id": "n-spam", "title": "通知", "body": "正文", "urgency": "normal"])
        #expect(await eventually(timeout: .seconds(20)) { mail.messages().count == 1 }, "\(rig.log)")
        try rig.sim.control("POST", "kick", ["message": "你已被管理员下线"])
        #expect(await eventually(timeout: .seconds(20)) { mail.messages().count == 2 }, "the queue moved on: \(rig.log)")
        let messages = mail.messages()
        #expect(messages.map { $0["rejected"] as? Bool } == [true, false] && messages[1]["answered"] as? Bool == true, "\(messages)")
        #expect(messages[1]["subject"] as? String == "Logged out of the campus network")
        #expect(rig.log.contains("refused an alert (E-mail: 5.7.1 Message rejected as spam (SMTP 554))"), "in the server's words: \(rig.log)")
        // Not sent again: ForwardingShellTests.anAlertATargetRefusesForGoodDoesNotHoldUpTheNext, on the virtual clock.
        #expect(mail.messages().count == 2)
    }

    /// One grapheme of 1,201 bytes (e and 600 combining accents) made one
    /// encoded word of 1,600 octets: the server refused the line.
    @Test func aSubjectOfOneHugeCharacterIsFoldedAndTaken() async throws {
        let mail = try SMTPRecorder(tls: "implicit", user: "12345", password: "code")
        let rig = try await Self.daemon("forward = mailtos://12345:code@127.0.0.1:\(mail.port)/?to=me@campus.example")
        let giant = "e" + String(repeating: "\u{301}", count: 600) + " 停电通知"
        try rig.sim.control("POST", "notice", ["id": "n-giant", "title": giant, "body": "正文", "urgency": "normal"])
        #expect(await eventually(timeout: .seconds(20)) { mail.messages().count == 1 }, "\(rig.log)")
        let message = try #require(mail.messages().first)
        #expect(message["too_long"] as? Bool == false && message["answered"] as? Bool == true, "\(message)")
        let subject = message["subject"] as? String ?? ""
        let scalars = Array(subject.unicodeScalars)
        #expect(scalars.first == "e" && scalars.dropFirst().prefix(400).allSatisfy { $0 == "\u{301}" } && subject.utf8.count <= 900,
                "cut to 900 bytes: \(subject.utf8.count) bytes, ends \(scalars.suffix(3).map { String($0.value, radix: 16) })")
    }
}
