@testable import SrunProtocol
import Testing

/// Each failure the Srun protocol notes list, in the class the daemon maps
/// onto its problem codes (§2.3, §4), from the code in `ecode` or at the
/// start of `error_msg`, or from the words.
@Suite struct RefusalTests {
    static let cases: [(ecode: String?, error: String, message: String, refusal: SrunRefusal)] = [
        ("E2531", "login_error", "E2531: User not found.", .badCredentials),
        ("E2553", "login_error", "E2553: Password is error.", .badCredentials),
        ("", "login_error", "E2553: Password is error.", .badCredentials),
        ("E2901", "login_error", "E2901: (Third party 1)bind_user2: ldap_bind error", .badCredentials),
        ("E2901", "login_error", "E2901: (Third party 30002)sam_err:30002", .badCredentials),
        ("E2901", "login_error", "E2901: (Third party -1)Cannot connect to the third_auth server.", .transient),
        ("E2901", "login_error", "E2901: (Third party 1)Status_Err", .unknown),
        ("E2620", "login_error", "E2620: You are already online.", .onlineElsewhere),
        ("E3001", "login_error", "", .quotaExhausted), ("E3004", "login_error", "", .quotaExhausted),
        ("E2616", "login_error", "", .quotaExhausted),
        ("E2606", "login_error", "", .accountDisabled), ("E2534", "login_error", "", .accountDisabled),
        ("E2532", "login_error", "E2532: The two authentication interval cannot be less than 3 seconds.",
         .rateLimited(retryAfter: .milliseconds(3500))),
        ("E2533", "login_error", "", .rateLimited(retryAfter: .milliseconds(3500))),
        (nil, "challenge_expire_error", "", .challengeExpired),
        (nil, "no_response_data_error", "", .maybeOnline),
        ("", "login_error", "INFO failed, BAS respond timeout.", .portalMisconfigured),
        ("", "login_error", "INFO Error,err_code=2", .portalMisconfigured),
        ("", "no_acid_error", "", .portalMisconfigured),
        ("", "login_error", "Nas type not found.", .portalMisconfigured),
        ("", "sign_error", "", .protocolError), ("", "missing_required_parameters_error", "", .protocolError),
        ("E2601", "login_error", "", .permanent), ("E2611", "login_error", "", .permanent), ("E2613", "login_error", "", .permanent),
        ("E2615", "login_error", "", .permanent), ("E2806", "login_error", "", .permanent), ("E2808", "login_error", "", .permanent),
        ("E2535", "login_error", "", .serverError), ("E2536", "login_error", "", .serverError),
        ("E2833", "login_error", "E2833: IP地址异常", .unknown), ("E9999", "login_error", "", .unknown), ("", "login_error", "odd words", .unknown),
        ("E25310", "login_error", "", .unknown), ("0", "login_error", "", .unknown),
    ]

    @Test(arguments: cases.indices)
    func eachCodeHasItsClass(_ index: Int) {
        let (ecode, error, message, refusal) = Self.cases[index]
        #expect(SrunRefusal.classify(ecode: ecode, error: error, message: message) == refusal, "\(Self.cases[index])")
    }

    @Test func aRefusalKeepsThePortalsWords() throws {
        let body = #"cb({"client_ip":"10.1.2.3","ecode":"E2553","error":"login_error","error_msg":"E2553: Password is error.","res":"login_error"})"#
        #expect(try SrunLoginAnswer.read(Array(body.utf8), callback: "cb").get() == .refused(.badCredentials, words: "E2553: Password is error."))
        let bare = #"cb({"ecode":"","error":"no_acid_error","res":"no_acid_error"})"#
        #expect(try SrunLoginAnswer.read(Array(bare.utf8), callback: "cb").get() == .refused(.portalMisconfigured, words: "no_acid_error"))
    }
}
