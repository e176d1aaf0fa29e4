import CoreVocabulary

/// Where a mail target sends (`forward = mailtos://USER:PASS@HOST[:PORT]/?to=ADDR`).
public struct MailAddress: Sendable, Hashable {
    /// `smtps://HOST:PORT` (implicit TLS) or `smtp://HOST:PORT` (STARTTLS, required).
    public var server: String
    /// The login, and its password (QQ Mail: the authorization code): secrets.
    public var user: String
    public var password: String
    public var from: String
    public var to: [String]

    /// `HOST:PORT`, as shown.
    public var host: String { String(server.drop { $0 != "/" }.drop { $0 == "/" }) }

    /// Eight hex digits that tell two mailboxes apart without naming them.
    public var fingerprint: String { Fingerprint.of(user + "/" + to.joined(separator: ",")) }
}

/// What libcurl's SMTP needs besides the server: the envelope and the login.
public struct MailEnvelope: Sendable, Hashable {
    public var from: String
    public var to: [String]
    public var user: String
    public var password: String

    public init(from: String, to: [String], user: String, password: String) {
        self.from = from
        self.to = to
        self.user = user
        self.password = password
    }
}

/// A plain-text mail (RFC 5322) for an alert: `Date` (when it was raised),
/// `Message-ID` from the alert's idempotency key (the same for every
/// attempt: a repeat after a crash is recognisably the same message), a
/// UTF-8 `Subject` as an RFC 2047 encoded word, the body in base64. Lines
/// end in CRLF and stay under 78 characters.
enum MailMessage {
    static func text(_ alert: ForwardedAlert, message: String, from: String, to: [String]) -> String {
        let domain = alert.host.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "." }
            && !alert.host.isEmpty ? alert.host : "localhost"
        let key = String(alert.key.unicodeScalars.filter { $0.value > 0x20 && $0.value < 0x7F && $0 != "<" && $0 != ">" && $0 != "@" }.map(Character.init).prefix(100))
        let headers = [
            "Date: " + date(alert.postedAt),
            "From: CC Relay <\(from)>",
            "To: " + to.map { "<\($0)>" }.joined(separator: ", "),
            "Subject: " + encodedWords(alert.title),
            "Message-ID: <\(key)@ccrelay.\(domain)>",
            "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=UTF-8",
            "Content-Transfer-Encoding: base64",
            "X-Mailer: ccrelay",
        ]
        let body = MessageText.base64(Array(message.replacing("\r\n", with: "\n").replacing("\n", with: "\r\n").utf8))
        let lines = stride(from: 0, to: body.count, by: 76).map { start -> String in
            let from = body.index(body.startIndex, offsetBy: start)
            return String(body[from..<(body.index(from, offsetBy: 76, limitedBy: body.endIndex) ?? body.endIndex)])
        }
        return (headers + [""] + lines).joined(separator: "\r\n") + "\r\n"
    }

    /// `=?UTF-8?B?…?=` words of at most 45 bytes of text each — 72
    /// octets, within RFC 2047's 75 — folded onto lines of their own, so no
    /// header line comes near RFC 5322's 998. A word holds whole characters;
    /// one character larger than a word (a long combining sequence) is split
    /// between its scalars, each word still valid UTF-8. At most
    /// `subjectLimit` bytes of text, `…` where it was cut.
    static func encodedWords(_ text: String) -> String {
        var words: [String] = []
        var chunk: [UInt8] = []
        func add(_ bytes: [UInt8]) {
            if chunk.count + bytes.count > 45, !chunk.isEmpty {
                words.append("=?UTF-8?B?" + MessageText.base64(chunk) + "?=")
                chunk = []
            }
            chunk += bytes
        }
        // Whole characters, or the scalars of one too large for a word; at most `subjectLimit` bytes.
        let pieces = text.flatMap { character in
            character.utf8.count <= 45 ? [Array(String(character).utf8)] : character.unicodeScalars.map { Array(String($0).utf8) }
        }
        let room = pieces.reduce(0) { $0 + $1.count } <= subjectLimit ? subjectLimit : subjectLimit - 3
        var used = 0
        for piece in pieces {
            guard used + piece.count <= room else {
                add(Array("…".utf8))
                break
            }
            used += piece.count
            add(piece)
        }
        if !chunk.isEmpty || words.isEmpty { words.append("=?UTF-8?B?" + MessageText.base64(chunk) + "?=") }
        return words.joined(separator: "\r\n ")
    }

    /// The most of a title a Subject carries (a campus notice's title may be long).
    static let subjectLimit = 900

    /// RFC 5322's date, in UTC: `Wed, 02 Dec 2026 12:00:00 +0000`.
    static func date(_ seconds: Double) -> String {
        let whole = Int64(seconds.isFinite ? max(0, min(seconds, 253_402_300_799)) : 0)
        let days = whole / 86_400
        let time = whole % 86_400
        // Howard Hinnant's days-to-civil.
        let z = days + 719_468
        let era = z / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(weekdays[Int(days % 7)]), \(two(day)) \(months[Int(month - 1)]) \(year) "
            + "\(two(time / 3600)):\(two(time % 3600 / 60)):\(two(time % 60)) +0000"
    }
}
