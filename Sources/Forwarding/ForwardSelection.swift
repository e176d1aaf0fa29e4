import CoreVocabulary

/// Which alerts are forwarded (`[relay] kinds`): alert kind names, plus
/// `notice-critical` for the campus notices the server marks critical.
public struct ForwardSelection: Sendable, Hashable {
    public var kinds: Set<AlertKind>
    /// Notices of critical urgency, even when `notice` itself is not selected.
    public var criticalNotices: Bool

    public init(kinds: Set<AlertKind>, criticalNotices: Bool) {
        self.kinds = kinds
        self.criticalNotices = criticalNotices
    }

    /// The default: logged-out, keepalive-failing, credentials, back-online (a phone that heard the bad
    /// news hears it is over), notice-critical.
    public static let standard = ForwardSelection(kinds: [.loggedOut, .keepAliveFailing, .credentials, .backOnline], criticalNotices: true)

    /// Never forwarded: the status bubble, and the alert that forwarding itself is refused.
    static let local: Set<AlertKind> = [.status, .forwardRefused]

    /// The names `kinds =` takes.
    public static let names: [String] = AlertKind.allCases.filter { !local.contains($0) }.map(\.rawValue) + ["notice-critical"]

    /// The selection as `kinds =` writes it.
    public var names: [String] {
        AlertKind.allCases.filter { kinds.contains($0) }.map(\.rawValue) + (criticalNotices ? ["notice-critical"] : [])
    }

    /// Whether `alert` goes out (the local kinds never do).
    public func forwards(_ alert: Alert) -> Bool {
        guard !Self.local.contains(alert.kind) else { return false }
        return kinds.contains(alert.kind) || alert.kind == .notice && criticalNotices && alert.urgency == .critical
    }

    /// Reads a comma-separated list of names; fails naming the first unknown one.
    public static func parse(_ text: String) -> Result<ForwardSelection, ForwardTargetProblem> {
        var selection = ForwardSelection(kinds: [], criticalNotices: false)
        for part in text.split(separator: ",") {
            let name = part.trimmed
            if name == "notice-critical" {
                selection.criticalNotices = true
            } else if let kind = AlertKind(rawValue: name), !local.contains(kind) {
                selection.kinds.insert(kind)
            } else {
                let near = names.min(by: { editDistance($0, name) < editDistance($1, name) }).flatMap { editDistance($0, name) <= 3 ? $0 : nil }
                return .failure(ForwardTargetProblem { localize in
                    TextTemplate.fill(localize("unknown alert kind '%s' in kinds"), name)
                        + (near.map { TextTemplate.fill(localize("; did you mean '%s'?"), $0) } ?? "")
                        + TextTemplate.fill(localize(" (known: %s)"), localize.list(names))
                })
            }
        }
        guard !selection.kinds.isEmpty || selection.criticalNotices else {
            return .failure(ForwardTargetProblem { localize in
                TextTemplate.fill(localize("kinds is empty; name at least one of: %s"), localize.list(names))
            })
        }
        return .success(selection)
    }
}
