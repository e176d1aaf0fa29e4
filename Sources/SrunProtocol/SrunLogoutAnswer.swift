/// How the portal answered a logout (`srun_portal?action=logout` or the signed `rad_user_dm`).
public enum SrunLogoutAnswer: Sendable, Hashable {
    /// The session is over (`error` `ok`, or `logout_ok` from DM).
    case loggedOut
    /// There was no session to end (`not_online_error`, or `You are not online.`).
    case notOnline
    /// Refused, with the portal's own words.
    case refused(SrunRefusal, words: String)

    static func read(_ body: [UInt8], callback: String) -> Result<SrunLogoutAnswer, SrunAnswer.Problem> {
        SrunAnswer.read(body, callback: callback).map { answer in
            let error = answer.error
            if error == "ok" || error == "logout_ok" { return .loggedOut }
            if error == "not_online_error" || answer.text("error_msg", limit: 300)?.lowercased().contains("you are not online") == true {
                return .notOnline
            }
            return .refused(answer.refusal, words: answer.words)
        }
    }
}
