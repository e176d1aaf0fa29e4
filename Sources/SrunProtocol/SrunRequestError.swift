/// Why a request was not sent. The text never holds the password.
public enum SrunRequestError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The user name is empty, too long, or not printable ASCII without spaces.
    case userUnusable
    /// The password is empty or longer than 256 characters.
    case passwordUnusable
    /// The password holds characters outside printable ASCII, which Srun
    /// clients encode each their own way (UTF-16 units, code points or UTF-8 bytes).
    case passwordNotASCII
    /// The URL to discover the portal from is not an http or https URL (without user or password).
    case discoveryURLUnusable

    public var description: String {
        switch self {
        case .userUnusable:
            "the Srun user name must be 1–128 printable ASCII characters without spaces; nothing was sent"
        case .passwordUnusable:
            "the Srun password is empty or longer than 256 characters; nothing was sent"
        case .passwordNotASCII:
            "the Srun password has characters outside printable ASCII, which Srun portals read differently from one client to the next; nothing was sent. Log in once through the portal's page, or change the password to ASCII"
        case .discoveryURLUnusable:
            "the portal is found from a plain http:// (or https://) URL without user or password, such as http://www.example.edu.cn/"
        }
    }

    /// Checks what a login would send.
    static func check(user: String, password: String) throws(SrunRequestError) {
        guard SrunText.isToken(user, limit: 128) else { throw .userUnusable }
        guard (1...256).contains(password.utf8.count) else { throw .passwordUnusable }
        guard password.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else { throw .passwordNotASCII }
    }
}
