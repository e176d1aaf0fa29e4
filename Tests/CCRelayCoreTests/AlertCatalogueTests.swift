import Foundation
import CCRelayCore
import CoreVocabulary
import Testing

/// The alert table of docs/contracts.md, and the translations of every alert text.
@Suite struct AlertCatalogueTests {
    static let english = Localizer.english

    @Test func everyKindHasTheCategoryUrgencyAndBadgeOfTheDesign() {
        let expected: [AlertKind: (String, Urgency, Int)] = [
            .loggedOut: ("network.disconnected", .critical, 1),
            .keepAliveFailing: ("network.error", .normal, 1),
            .locationDenied: ("x-ccrelay.location", .critical, 1),
            .locationOff: ("x-ccrelay.location", .critical, 1),
            .locationTooCoarse: ("x-ccrelay.location", .normal, 1),
            .credentials: ("x-ccrelay.auth", .critical, 1),
            .serverUntrusted: ("x-ccrelay.trust", .normal, 1),
            .notice: ("x-ccrelay.notice", .normal, 1),
            .backOnline: ("network.connected", .low, 0),
            .forwardRefused: ("x-ccrelay.relay", .normal, 1),
            .notSetUp: ("x-ccrelay.auth", .critical, 1),
            .noOutsideAccess: ("network.error", .normal, 1),
            .newDevice: ("x-ccrelay.account", .normal, 1),
            .status: ("x-ccrelay.status", .low, 0),
        ]
        #expect(AlertCatalogue.examples(Self.english).map(\.kind) == AlertKind.allCases)
        for subject in AlertCatalogue.examples(Self.english) {
            let alert = AlertCatalogue.alert(for: subject, localize: Self.english)
            guard let (category, urgency, badge) = expected[alert.kind] else {
                Issue.record("\(alert.kind) has no expected category, urgency and badge")
                continue
            }
            #expect(alert.kind.category == category, "\(alert.kind)")
            #expect(alert.urgency == urgency, "\(alert.kind)")
            #expect(alert.kind.badgeIncrement == badge, "\(alert.kind)")
            #expect(alert.transient == (alert.kind == .backOnline || alert.kind == .status),
                    "only back-online and the status bubble are transient")
        }
    }

    @Test func logoutOffersReloginAndNoticesKeepTheServersWordsAndUrgency() {
        let logout = AlertCatalogue.alert(for: .loggedOut(message: "管理员已将你下线"), localize: Self.english)
        #expect(logout.actions.map(\.key) == ["default", "relogin"])
        #expect(logout.body.hasSuffix("\n管理员已将你下线"))
        let notice = AlertCatalogue.alert(
            for: .notice(id: "n1", title: "<title>", body: "a & b", urgency: .critical), localize: Self.english)
        #expect(notice.title == "<title>" && notice.body == "a & b" && notice.urgency == .critical)
        #expect(Urgency(noticeText: "low") == .low && Urgency(noticeText: nil) == .normal)
        #expect(Urgency(noticeText: "bogus") == .normal)
    }

    /// Issue 33.7: the bubble listed six endpoints' answers; they are doctor's and the timeline's.
    @Test func noOutsideAccessSaysWhatToDoInAFewWords() {
        for portal in [true, false] {
            let alert = AlertCatalogue.alert(for: .noOutsideAccess(portal: portal), localize: Self.english)
            #expect(!alert.body.contains("IPv4") && !alert.body.contains("HTTP") && alert.body.contains("ccrelay doctor"), "\(alert.body)")
            #expect(alert.body.split(separator: " ").count <= 45, "\(alert.body)")
        }
    }

    /// Issue 33.7: the first bubble a new user sees said "not set up, run ccrelay setup" twice in 90 words.
    @Test func theFirstBubbleOfAFreshInstallSaysItOnce() {
        let sentence = "Not set up: run ccrelay setup (it asks for the server and your certificate and tries a login). "
            + "Or write ~/.config/ccrelay/ccrelay.conf; the daemon starts the moment it is usable."
        let alert = AlertCatalogue.alert(
            for: .status(StatusSummary(state: .unconfigured, ip: "", remaining: nil, unread: 0, problem: sentence)), localize: Self.english)
        #expect(alert.body.components(separatedBy: "ccrelay setup").count == 2, "\(alert.body)")
        #expect(alert.body.split(separator: " ").count <= 20, "\(alert.body)")
        let kicked = AlertCatalogue.alert(
            for: .status(StatusSummary(state: .loggedOut, ip: "", remaining: nil, unread: 0, problem: "The server ended the session.")),
            localize: Self.english)
        #expect(kicked.body.contains("The server ended the session."), "other states keep their problem: \(kicked.body)")
    }

    @Test func numbersAreFilledIntoTheText() {
        let failing = AlertCatalogue.alert(for: .keepAliveFailing(remainingSeconds: 17), localize: Self.english)
        #expect(failing.body.contains(" 17 seconds"))
        let oneSecond = AlertCatalogue.alert(for: .keepAliveFailing(remainingSeconds: 1), localize: Self.english)
        #expect(oneSecond.body.contains(" 1 second unless"), "one second, not one seconds")
        let oneDay = AlertCatalogue.alert(for: .credentials(.certificateExpiring(days: 1)), localize: Self.english)
        #expect(oneDay.body.contains("in 1 day."))
        let negative = AlertCatalogue.alert(for: .keepAliveFailing(remainingSeconds: -3), localize: Self.english)
        #expect(negative.body.contains(" 0 seconds"))
        let expiring = AlertCatalogue.alert(for: .credentials(.certificateExpiring(days: 5)), localize: Self.english)
        #expect(expiring.body.contains("in 5 days"))
    }

    /// Every text the catalogue can produce, with the message ids it asked for.
    static func allMessageIDs() -> Set<String> {
        let recorder = MessageRecorder()
        let subjects = AlertCatalogue.examples(recorder.localizer) + AlertCatalogue.moreExamples(recorder.localizer)
            + AlertCatalogue.allCredentialProblems.map { .credentials($0) }
        for subject in subjects { _ = AlertCatalogue.alert(for: subject, localize: recorder.localizer) }
        return recorder.ids
    }

    @Test(arguments: ["zh_CN", "zh_TW"])
    func everyTextIsTranslated(_ language: String) throws {
        let catalogue = try POFile(language: language)
        let ids = Self.allMessageIDs()
        #expect(ids.count >= 20)
        for id in ids {
            let translation = catalogue.translations[id]
            #expect(translation?.isEmpty == false, "\(language).po lacks a translation of “\(id)”")
            #expect(translation.map { $0.components(separatedBy: "%s").count == id.components(separatedBy: "%s").count } ?? false,
                    "\(language).po changes the %s placeholders of “\(id)”")
        }
    }

    @Test func simplifiedChineseTextsSayWhatTheDesignRequires() throws {
        let catalogue = try POFile(language: "zh_CN")
        let required: [AlertKind: String] = [
            .loggedOut: "登录已被注销，请重新登录", .keepAliveFailing: "保持在线失败", .locationDenied: "定位服务被禁止",
            .locationOff: "未开启定位服务", .locationTooCoarse: "定位服务未正确设置",
        ]
        for subject in AlertCatalogue.examples(catalogue.localizer) {
            guard let phrase = required[subject.kind] else { continue }
            let alert = AlertCatalogue.alert(for: subject, localize: catalogue.localizer)
            #expect((alert.title + alert.body).contains(phrase), "\(subject.kind) must say \(phrase)")
        }
    }
}

/// Records the message ids a localizer is asked for.
final class MessageRecorder: @unchecked Sendable {
    // Guard: used by one test on one thread.
    var ids: Set<String> = []
    func record(_ id: String) -> String {
        ids.insert(id)
        return id
    }

    /// Records a counted sentence by its first (singular) form, the msgid of its catalogue entry.
    var localizer: Localizer {
        Localizer(text: { self.record($0) }, plural: { one, other, count in
            _ = self.record(one)
            return count == 1 ? one : other
        })
    }
}

/// The msgid → msgstr pairs of one of the project's .po files.
struct POFile: Sendable {
    /// msgid → msgstr; for a counted sentence, its singular msgid → msgstr[0] (Chinese has one form).
    var translations: [String: String] = [:]

    /// The catalogue's texts, the English ones where it has none.
    var localizer: Localizer {
        let translations = translations
        return Localizer(text: { translations[$0] ?? $0 }, plural: { one, other, count in
            translations[one] ?? (count == 1 ? one : other)
        })
    }

    init(language: String) throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("resources/po/\(language).po"), encoding: .utf8)
        var current: (id: String, str: String, field: String?) = ("", "", nil)
        func unquote(_ line: Substring) -> String {
            let inner = line.drop { $0 != "\"" }.dropFirst().dropLast()
            return inner.replacingOccurrences(of: "\\\"", with: "\"").replacingOccurrences(of: "\\n", with: "\n")
        }
        func flush() {
            if !current.id.isEmpty { translations[current.id] = current.str }
            current = ("", "", nil)
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("msgid ") {
                flush()
                current.id = unquote(line)
                current.field = "id"
            } else if line.hasPrefix("msgid_plural ") {
                current.field = nil
            } else if line.hasPrefix("msgstr ") || line.hasPrefix("msgstr[0] ") {
                current.str = unquote(line)
                current.field = "str"
            } else if line.hasPrefix("msgstr[") {
                current.field = nil
            } else if line.hasPrefix("\"") {
                if current.field == "id" { current.id += unquote(line) } else if current.field == "str" { current.str += unquote(line) }
            }
        }
        flush()
    }
}
