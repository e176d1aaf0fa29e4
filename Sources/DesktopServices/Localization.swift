import CLinux
import CCRelayCore
import CoreVocabulary
#if canImport(Glibc)
import Glibc
#endif

/// The user's language through glibc's gettext (text domain `ccrelay`).
///
/// Catalogues are looked up in `$CCRELAY_LOCALEDIR`, then beside the
/// executable (`locale/`, where the build puts them), then in the install
/// prefix (`../share/locale` from bin/, `../../share/locale` from libexec/ccrelay/).
public enum Localization {
    public static let domain = "ccrelay"

    /// Adopts the user's locale and binds the text domain. Call once at start.
    public static func setUp() {
        setlocale(LC_ALL, "")
        if let directory = catalogueDirectory() {
            bindtextdomain(domain, directory)
        }
        bind_textdomain_codeset(domain, "UTF-8")
    }

    /// The translation of `messageID` in the user's language, or the English original.
    public static func localize(_ messageID: String) -> String {
        // gettext returns its argument itself when there is no translation,
        // so the result is read while the argument's C string is alive.
        messageID.withCString { cMessageID in
            guard let translated = dgettext(domain, cMessageID), translated != UnsafeMutablePointer(mutating: cMessageID)
            else { return messageID }
            return String(cString: translated)
        }
    }

    /// The sentence about `count` in the user's language (`ngettext`): `one`
    /// or `other` in English, the catalogue's form for `count` otherwise.
    public static func localize(_ one: String, _ other: String, count: Int) -> String {
        one.withCString { cOne in
            other.withCString { cOther in
                guard let translated = dngettext(domain, cOne, cOther, UInt(max(0, count))) else { return count == 1 ? one : other }
                if translated == UnsafeMutablePointer(mutating: cOne) { return one }
                if translated == UnsafeMutablePointer(mutating: cOther) { return other }
                return String(cString: translated)
            }
        }
    }

    /// The catalogue's translations for the pure code's texts.
    public static let localizer = Localizer(text: { localize($0) }, plural: { localize($0, $1, count: $2) })

    static func catalogueDirectory() -> String? {
        if let explicit = getenv("CCRELAY_LOCALEDIR") { return String(cString: explicit) }
        guard let folder = ExecutableLocation.directory else { return nil }
        // The build tree; an installed bin/; an installed libexec/ccrelay/ (the daemon). A candidate
        // counts only when it holds a catalogue of ccrelay's: /usr/bin/locale is glibc's locale program.
        let candidates = [folder + "/locale", folder + "/../share/locale", folder + "/../../share/locale"]
        return candidates.first { candidate in
            ["zh_CN", "zh_TW"].contains { access(candidate + "/\($0)/LC_MESSAGES/\(domain).mo", R_OK) == 0 }
        }
    }
}
