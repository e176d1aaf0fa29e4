@testable import SrunProtocol
import Testing

/// `rad_user_info` read for `ccrelay doctor`: the session as `SrunUserInfo`
/// reads it, and the portal's `srun_ver`, bounded and cleaned.
@Suite struct PortalStatusTests {
    static let callback = AnswerReadingTests.callback

    func status(_ text: String) -> Result<SrunPortalStatus, SrunAnswer.Problem> {
        SrunPortalStatus.read(Array(text.utf8), callback: Self.callback)
    }

    @Test func theVersionComesWithTheOfflineAndTheOnlineAnswer() throws {
        let offline = try status(Self.callback + #"({"client_ip":"10.1.2.3","error":"not_online_error","res":"not_online_error","srun_ver":"SRunCGIAuthIntfSvr V1.18 B20210909"})"#).get()
        #expect(offline == SrunPortalStatus(userInfo: .offline(clientIP: "10.1.2.3"), serverVersion: "SRunCGIAuthIntfSvr V1.18 B20210909"))
        let online = try status(Self.callback + "(" + AnswerReadingTests.online.dropLast() + #","srun_ver":"V1.18"})"#).get()
        guard case .online(let account) = online.userInfo else {
            Issue.record("online: \(online)")
            return
        }
        #expect(account.onlineIP == "10.111.15.224" && online.serverVersion == "V1.18")
    }

    @Test func aVersionOfControlCharactersOrBidiOverridesIsCleanedAndBounded() throws {
        // JSON escapes: ESC, a right-to-left override, a tab; then far too long.
        let hostile = #"V1.18\u001b[31m\u202e\t"# + String(repeating: "x", count: 500)
        let read = try status(#"{"error":"not_online_error","srun_ver":""# + hostile + #""}"#).get()
        let version = try #require(read.serverVersion)
        #expect(version.count <= 64 && !version.unicodeScalars.contains { $0.value < 0x20 || $0 == "\u{202E}" }, "\(version)")
        #expect(try status(#"{"error":"not_online_error","srun_ver":""}"#).get().serverVersion == nil, "an empty version is none")
        #expect(try status("not_online").get() == SrunPortalStatus(userInfo: .offline(clientIP: nil)), "the legacy text has no version")
    }

    @Test func anAnswerThatIsNoStatusIsAProblem() {
        #expect(throws: SrunAnswer.Problem.self) { try status(#"{"error":"login_error"}"#).get() }
    }
}
