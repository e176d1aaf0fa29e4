import CoreVocabulary

/// Changes keys of a `ccrelay.conf` text and keeps everything else as it
/// was: every other line, comment, blank line and unknown key, in its
/// place. `ccrelay setup` writes through it, so that a second run changes
/// only what it asked or was told (`[location] mode = off` stays off).
public struct ConfigurationEditor: Sendable {
    /// The file's lines, without their line ends.
    public internal(set) var lines: [String]

    /// The text to edit (empty for a new file). CRLF line ends are read as LF.
    public init(_ text: String) {
        var parts = text.replacing("\r\n", with: "\n").split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if parts.last == "" { parts.removeLast() }
        lines = parts
    }

    /// The edited file, ending with a line end.
    public var text: String { lines.isEmpty ? "" : lines.joined(separator: "\n") + "\n" }

    /// Why `value` cannot stand after `key =` in this file format, or nil when
    /// it reads back exactly: no control characters (a line break would start
    /// new keys), no space at either end (trimmed when read), nothing that
    /// reads as a comment (`#` or `;` at the start or after a space or tab), not empty. Said in
    /// `localize`'s language, after the option that gave the value (`--forward is empty`).
    public static func problem(with value: String, localize: Localizer) -> String? {
        if value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || (0x80..<0xA0).contains($0.value)
            || $0 == "\u{2028}" || $0 == "\u{2029}" || $0 == "\u{FEFF}" })
        {
            return localize("holds a control character (a line break or tab?); give it on one line")
        }
        if value.isEmpty { return localize("is empty") }
        if value.first == " " || value.last == " " { return localize("begins or ends with a space, which the file cannot keep") }
        if let first = value.first, first == "#" || first == ";" {
            return TextTemplate.fill(localize("begins with '%s', which the file reads as a comment"), String(first))
        }
        if value.contains(" #") || value.contains(" ;") {
            return localize("holds ' #' or ' ;', which the file reads as the start of a comment; rename the file or folder")
        }
        return nil
    }

    /// Sets `key` in `[group]` to `value` (checked with `problem(with:)` first):
    /// the key's last line in the group is rewritten in place (earlier
    /// repeats are removed); a missing key goes after the group's last
    /// setting; a missing group is added at the end.
    public mutating func set(_ group: String, _ key: String, to value: String) {
        let found = lineIndices(of: key, in: group)
        if let last = found.last {
            lines[last] = "\(key) = \(value)"
            for index in found.dropLast().reversed() { lines.remove(at: index) }
        } else {
            add(group, key, value)
        }
    }

    /// Adds `key = value` to `[group]` (for keys that may repeat, such as a
    /// relay target) unless that very line is there.
    public mutating func add(_ group: String, _ key: String, _ value: String) {
        guard !lineIndices(of: key, in: group).contains(where: { Self.value(of: lines[$0]) == value }) else { return }
        let line = "\(key) = \(value)"
        guard let range = groupRange(group) else {
            if let last = lines.last, !last.trimmed.isEmpty { lines.append("") }
            lines += ["[\(group)]", line]
            return
        }
        // After the group's last setting, before the comments and blank lines that lead into the next group.
        var insertAt = range.upperBound
        while insertAt > range.lowerBound + 1, Self.isBlankOrComment(lines[insertAt - 1]) { insertAt -= 1 }
        lines.insert(line, at: insertAt)
    }

    /// Removes every `key` line of `[group]`.
    public mutating func remove(_ group: String, _ key: String) {
        for index in lineIndices(of: key, in: group).reversed() { lines.remove(at: index) }
    }

    /// The value `key` has in `[group]` (its last line), as written.
    public func value(_ group: String, _ key: String) -> String? {
        lineIndices(of: key, in: group).last.flatMap { Self.value(of: lines[$0]) }
    }

    // MARK: Reading lines as the parser does

    /// The lines of `[group]`: from its header (the last one, when repeated
    /// headers split it, the parser reads them all as one group) to the next header.
    private func groupRange(_ group: String) -> Range<Int>? {
        var found: Range<Int>?
        var start: Int?
        for (index, line) in lines.enumerated() {
            guard let name = Self.header(line) else { continue }
            if let open = start { found = open..<index; start = nil }
            if name == group { start = index }
        }
        if let open = start { found = open..<lines.count }
        return found
    }

    private func lineIndices(of key: String, in group: String) -> [Int] {
        var current: String?
        var indices: [Int] = []
        for (index, line) in lines.enumerated() {
            if let name = Self.header(line) {
                current = name
            } else if current == group, Self.key(of: line) == key {
                indices.append(index)
            }
        }
        return indices
    }

    private static func content(_ line: String) -> String {
        ConfigurationParser.stripComment(Substring(line)).trimmed
    }

    private static func isBlankOrComment(_ line: String) -> Bool { content(line).isEmpty }

    static func header(_ line: String) -> String? {
        let text = content(line)
        guard text.hasPrefix("["), text.hasSuffix("]") else { return nil }
        return String(text.dropFirst().dropLast()).trimmed
    }

    static func key(of line: String) -> String? {
        let text = content(line)
        guard !text.hasPrefix("["), let equals = text.firstIndex(of: "=") else { return nil }
        return String(text[..<equals]).trimmed
    }

    static func value(of line: String) -> String? {
        let text = content(line)
        guard let equals = text.firstIndex(of: "=") else { return nil }
        return String(text[text.index(after: equals)...]).trimmed
    }
}
