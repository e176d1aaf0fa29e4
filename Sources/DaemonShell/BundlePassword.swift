import CoreVocabulary
import DBus
import DesktopServices
import EventLoop

/// The password of a PKCS#12 certificate bundle, kept in the desktop keyring
/// by `ccrelay setup` (or, for the system service, the systemd credential
/// `p12-password`): looked up once, before the daemon checks its
/// configuration, on a loop of its own that ends with the lookup.
enum BundlePassword {
    /// The keyring's password for `certificate`, or nil: none stored, no
    /// session bus or keyring, or no answer within 40 s (a keyring waiting to
    /// be unlocked). `log` hears why there was none, when it was an error (in
    /// the user's language: `config check` shows it).
    static func lookUp(_ certificate: String, log: (String) -> Void) -> String? {
        // The system service has no keyring: systemd hands it the password as a credential.
        switch SecretFile.credential("p12-password") {
        case .success(let password)?: return password
        case .failure(let problem)?: log(TextTemplate.fill(Localization.localize("the credential p12-password cannot be used: %s"), problem.description))
        case nil: break
        }
        do {
            let loop = try EventLoop()
            let connection = try Connection(bus: .session, loop: loop)
            defer { connection.close() }
            var answer: Result<String?, DBusError>?
            SecretService(connection: connection).secret(.bundlePassword(certificate: certificate)) { answer = $0 }
            let deadline = BootClock.now() + .seconds(40)
            while answer == nil, BootClock.now() < deadline { loop.runOnce(timeout: .seconds(1)) }
            switch answer {
            case .success(let password)?: return password
            case .failure(let error)?:
                log(TextTemplate.fill(Localization.localize("the keyring did not give the password of %s: %s"), certificate, error.message))
            case nil: log(TextTemplate.fill(Localization.localize("the keyring did not answer for the password of %s within 40 s"), certificate))
            }
        } catch {
            log(TextTemplate.fill(Localization.localize("no keyring for the password of %s: %s"), certificate, "\(error)"))
        }
        return nil
    }
}
