/// Messages with `%s` placeholders (gettext's message ids; translations
/// keep the placeholders), filled in the order given.
public enum TextTemplate {
    /// `template` with each `%s` replaced by the next of `values`, in order.
    public static func fill(_ template: String, _ values: String...) -> String {
        fill(template, values)
    }

    public static func fill(_ template: String, _ values: [String]) -> String {
        var remaining = values[...]
        var result = ""
        var pending = template[...]
        while let range = pending.firstRange(of: "%s"), let value = remaining.popFirst() {
            result += pending[..<range.lowerBound] + value
            pending = pending[range.upperBound...]
        }
        return result + pending
    }
}
