extension StringProtocol {
    /// Without the spaces, tabs and carriage returns at either end (a keyfile's value, a header's).
    public var trimmed: String {
        String(drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed().drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed())
    }
}
