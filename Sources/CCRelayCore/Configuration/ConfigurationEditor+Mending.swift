import CoreVocabulary
extension ConfigurationEditor {
    /// What `mendUnknownKeys()` did to one line the parser would ignore.
    public struct Mend: Sendable, Hashable {
        /// The line's number (1-based) in the text before mending.
        public var line: Int
        public var group: String
        /// The key as written.
        public var key: String
        /// The known key it is a misspelling of.
        public var known: String
        /// Whether the line was removed (the group sets `known` already) rather than renamed to `known`.
        public var removed: Bool
    }

    /// Mends the lines that `ConfigurationParser` ignores as misspelt keys of a
    /// known group (`setup --edit`): a key within two letters of a known one
    /// becomes that key (its value kept), or is removed when the group sets
    /// that key already. Other unknown keys (a newer version's, say), unknown
    /// groups and everything else stay as written.
    public mutating func mendUnknownKeys() -> [Mend] {
        var mends: [Mend] = []
        var group: String?
        var kept: [String] = []
        for (index, line) in lines.enumerated() {
            if let name = Self.header(line) { group = name }
            guard let group, let known = ConfigurationParser.knownKeys[group], let key = Self.key(of: line), !known.contains(key) else {
                kept.append(line)
                continue
            }
            guard let near = known.min(by: { editDistance($0, key) < editDistance($1, key) }), editDistance(near, key) <= 2 else {
                kept.append(line)
                continue
            }
            let removed = value(group, near) != nil
            if !removed, let value = Self.value(of: line) { kept.append("\(near) = \(value)") }
            mends.append(Mend(line: index + 1, group: group, key: key, known: near, removed: removed))
        }
        lines = kept
        return mends
    }
}
