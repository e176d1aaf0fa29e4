import DesktopServices

/// A message in the user's language (gettext; `make pot` extracts what this is called with).
func localize(_ messageID: String) -> String { Localization.localize(messageID) }

/// `template` with each `%s` replaced by the next of `values` (translations keep the placeholders).
func fill(_ template: String, _ values: String...) -> String {
    var result = ""
    var rest = values[...]
    var remaining = Substring(template)
    while let range = remaining.firstRange(of: "%s") {
        result += remaining[..<range.lowerBound] + (rest.popFirst() ?? "")
        remaining = remaining[range.upperBound...]
    }
    return result + remaining
}
