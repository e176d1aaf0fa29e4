import CCRelayCore
import DesktopServices

/// A PKCS#12 bundle's password that setup cannot keep: without a keyring
/// (Secret Service) the daemon could not open the bundle at the next start,
/// so setup says the two ways out — a keyring, or PEM files, which need no
/// password — with the exact commands for this bundle.
enum SetupBundle {
    /// Says why the password of `certificate` was not kept (`reason`) and what to do instead; false.
    static func noKeyring(_ certificate: String, reason: String) -> Bool {
        Output.error(fill(localize("setup: no keyring (Secret Service) kept the password of %s (%s); nothing was written."), certificate, reason))
        Output.error(localize("  Either install a keyring, log out and in again, and run this setup again:"))
        Output.error("    sudo apt install gnome-keyring")
        Output.error(localize("  or turn the bundle into PEM files, which need no password (openssl asks for the bundle's; add -legacy if it says 'unsupported'):"))
        for command in PKCS12Conversion.commands(certificate) { Output.error("    " + command) }
        return false
    }
}
