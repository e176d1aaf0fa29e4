import CoreVocabulary
/// `[metrics] textfile = PATH`: where the daemon keeps its metrics for the
/// node exporter's textfile collector (issue 36), which reads the files of
/// one folder whose names end in `.prom`.
public enum MetricsTextfile {
    /// Debian's textfile folder (`prometheus-node-exporter`'s `--collector.textfile.directory`).
    public static let debianFolder = "/var/lib/prometheus/node-exporter"

    /// The problem with `path` (already made absolute) as the textfile, in `localize`'s language, or nil when it will do.
    public static func problem(_ path: String, localize: Localizer) -> String? {
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        guard path.hasPrefix("/"), name.hasSuffix(".prom"), name.count > ".prom".count, !name.hasPrefix("."),
            path.utf8.count <= 1024, !path.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else {
            return TextTemplate.fill(
                localize("textfile must be the absolute path of a file whose name ends in .prom (the node exporter's textfile collector reads no other), such as %s, got '%s'"),
                debianFolder + "/ccrelay.prom", PrintableText.oneLine(String(path.prefix(200))))
        }
        return nil
    }
}
