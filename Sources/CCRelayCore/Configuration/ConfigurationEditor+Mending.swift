extension ConfigurationEditor {
    /// What `mendUnknownKeys()` did to one line the parser would ignore.
    public struct Mend: Sendable, Hashable {
        /// The line's number (1-based) in the text before mending.
        public var line: Int
        public var group: String
        /// The key as written.
        public var key: String
        /// The known key it became (a typo within two letters of it), or nil: the line was removed.
        public var renamedTo: String?
    }

    /// Mends the lines that `ConfigurationParser` ignores as unknown keys of a
    /// known group (`setup --edit`): a key within two letters of a known one
    /// that the group does not set yet becomes that key (its value kept);
    /// any other is removed. Unknown groups and everything else stay as written.
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
            let near = known.min { editDistance($0, key) < editDistance($1, key) }
            if let near, editDistance(near, key) <= 2, value(group, near) == nil, let value = Self.value(of: line) {
                kept.append("\(near) = \(value)")
                mends.append(Mend(line: index + 1, group: group, key: key, renamedTo: near))
            } else {
                mends.append(Mend(line: index + 1, group: group, key: key, renamedTo: nil))
            }
        }
        lines = kept
        return mends
    }
}
