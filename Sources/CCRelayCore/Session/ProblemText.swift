import CoreVocabulary
/// What each `ProblemCode` means, in the user's language, for people
/// (`ccrelay status`'s last error). The daemon's `ProblemReport.sentence`
/// says more (the server's words, the HTTP status) but in English; a
/// translated sentence stands in for it where the catalogue has one.
public enum ProblemText {
    /// The sentence of the code named `wireName`, or nil for a code this version does not know.
    public static func sentence(_ wireName: String, localize: Localizer) -> String? {
        guard let code = ProblemCode(rawValue: wireName) else { return nil }
        return switch code {
        case .noNetwork: localize("The campus server cannot be reached from this network.")
        case .connectionLost: localize("The connection to the campus server broke; ccrelay tries again.")
        case .timeout: localize("The campus server did not answer in time; ccrelay tries again.")
        case .serverError: localize("The campus server has a problem; ccrelay tries again.")
        case .rateLimited: localize("The campus server asked ccrelay to slow down; it waits and tries again.")
        case .protocolError: localize("The campus server's reply was not understood; ccrelay tries again.")
        case .replyTooLarge: localize("The campus server sent a reply larger than CC/1 allows; ccrelay tries again.")
        case .serverUntrusted: localize("The campus server's certificate could not be verified, so nothing was sent. Often a login page (portal): log in to it in a browser.")
        case .pinMismatch: localize("The campus server's key does not match [server] pinned-key, so nothing was sent. Often a login page (portal): log in to it in a browser.")
        case .certificateRefused: localize("The campus server refused your student certificate. Check [auth] certificate, then run: ccrelay login")
        case .certificateUnusable: localize("Your certificate, key or CA file cannot be used. Check them with: ccrelay config check")
        case .certificateExpired: localize("Your student certificate has expired. Get a new one from campus IT.")
        case .badCredentials: localize("The server refused your user name or password. Save the right password: ccrelay login --save-password")
        case .noPassword: localize("No password for the login is saved. Save it: ccrelay login --save-password")
        case .accountDisabled: localize("Your campus account is disabled. Ask campus IT.")
        case .quotaExhausted: localize("Your campus account has used up its quota.")
        case .onlineElsewhere: localize("Your account is online on another device.")
        case .loggedOut: localize("The campus server ended the session.")
        case .locationRequired: localize("The campus requires this computer's location with every keep-alive.")
        case .portalMisconfigured: localize("The portal does not know this access point: [srun] ac-id in ccrelay.conf is wrong (auto finds it from the portal's address), or the portal is in trouble.")
        case .captchaRequired: localize("The portal asks for a picture captcha: log in once in a browser, then ccrelay carries on.")
        case .portalRefused: localize("The portal refused the login for a reason ccrelay cannot fix (a binding, a plan, or this kind of client); ask campus IT.")
        case .unconfigured: localize("ccrelay is not set up yet, or its configuration cannot be used: run ccrelay setup to set it up, or ccrelay config check to see what is wrong.")
        case .configurationUnusable: localize("The changed configuration cannot be used; ccrelay goes on with the one it had. ccrelay config check says why.")
        }
    }

    /// `reported` (the daemon's English sentence) in the user's language:
    /// the code's translated sentence when the catalogue has one, else `reported`.
    public static func localized(_ reported: String, code: String, localize: Localizer) -> String {
        guard let translated = sentence(code, localize: localize), translated != sentence(code, localize: .english) else { return reported }
        return translated
    }
}
