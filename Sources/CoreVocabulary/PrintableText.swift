/// Text from anywhere (a campus server, a push service, a file) made safe
/// for one line of a log or a terminal: line and paragraph breaks (LF, CR,
/// NEL, U+2028, U+2029) and tabs become spaces, other control characters
/// (C0, DEL, C1) and the bidirectional overrides that reorder what a reader
/// sees are dropped. So a CR LF from the network never starts a line of its
/// own (nor chooses its syslog priority with `<0>`), and no escape sequence
/// reaches a terminal.
public enum PrintableText {
    public static func oneLine(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x09, 0x0A, 0x0D, 0x85, 0x2028, 0x2029: result.append(" ")
            case 0x00...0x1F, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069: continue
            default: result.append(scalar)
            }
        }
        return String(result)
    }
}
