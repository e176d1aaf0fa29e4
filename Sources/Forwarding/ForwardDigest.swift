import CoreVocabulary

/// Several alerts as one message (`ForwardingPolicy` held them: quiet hours,
/// a budget, repeats): one title ×N when they share it, else "N alerts
/// since HH:MM" with a line each, newest first, repeats counted.
public enum ForwardDigest {
    /// The message for `alerts` (two or more); `time` writes an instant as
    /// people read it here, `localize` translates. Its key comes from theirs,
    /// so a digest sent again after a crash carries the same one.
    public static func alert(_ alerts: [ForwardedAlert], time: (Double) -> String, localize: Localizer) -> ForwardedAlert {
        let newestFirst = alerts.sorted { $0.postedAt != $1.postedAt ? $0.postedAt > $1.postedAt : $0.key > $1.key }
        guard let newest = newestFirst.first, let oldest = newestFirst.last, alerts.count > 1 else {
            return alerts.first ?? ForwardedAlert(kind: .notice, title: "", body: "", urgency: .low, postedAt: 0, key: "", host: "", late: false)
        }
        // Each title once, where it last came, with how many times.
        var groups: [(alert: ForwardedAlert, count: Int)] = []
        for alert in newestFirst {
            if let index = groups.firstIndex(where: { $0.alert.title == alert.title }) { groups[index].count += 1 } else { groups.append((alert, 1)) }
        }
        let since = time(oldest.postedAt)
        var digest = newest
        digest.urgency = alerts.map(\.urgency).max() ?? .normal
        // Held by design, and each line says when it came: no "Delayed" note.
        digest.late = false
        digest.key = "digest-" + Fingerprint.of(alerts.map(\.key).sorted().joined(separator: ",")) + "-\(alerts.count)"
        if groups.count == 1 {
            digest.title = "\(newest.title) ×\(alerts.count)"
            digest.body = newest.body + "\n\n" + TextTemplate.fill(localize("%s times since %s."), "\(alerts.count)", since)
        } else {
            digest.title = TextTemplate.fill(localize("CC Relay: %s alerts since %s"), "\(alerts.count)", since)
            digest.body = groups.map { group in
                let body = MessageText.cut(group.alert.body.split(separator: "\n").joined(separator: " "), bytes: 300)
                return "\(time(group.alert.postedAt))  \(group.alert.title)" + (group.count > 1 ? " ×\(group.count)" : "") + (body.isEmpty ? "" : ": " + body)
            }.joined(separator: "\n")
        }
        return digest
    }

    /// How many of `alerts` (oldest first) one message to `target` carries:
    /// as many as leave its digest's title and body within what the service
    /// takes (`ForwardTarget.messageRoom`); at least one. The rest go in the next.
    public static func fitting(_ alerts: [ForwardedAlert], in room: Int, time: (Double) -> String, localize: Localizer) -> Int {
        func fits(_ count: Int) -> Bool {
            let digest = alert(Array(alerts.prefix(count)), time: time, localize: localize)
            return digest.title.utf8.count + digest.body.utf8.count + 2 <= room
        }
        guard alerts.count > 1, !fits(alerts.count) else { return alerts.count }
        var (low, high) = (1, alerts.count)
        while high - low > 1 {
            let middle = (low + high) / 2
            if fits(middle) { low = middle } else { high = middle }
        }
        return low
    }
}
