import Foundation
import CCRelayCore
import CoreVocabulary
import TestSupport
import Testing

/// The built `ccrelay notify-test`, run as a user would, against real dunst.
@Suite(.desktopBudget) struct NotifyTestCommandTests {
    static let ccrelay = buildProductsDirectory.appendingPathComponent("ccrelay").path

    /// The catalogues of resources/po compiled with msgfmt for this run.
    static let localeDirectory: String = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ccrelay-test-locale-\(getpid())")
        for language in ["zh_CN", "zh_TW"] {
            let target = directory.appendingPathComponent("\(language)/LC_MESSAGES")
            try? FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
            _ = try? run("/usr/bin/msgfmt", ["--check", "-o", target.appendingPathComponent("ccrelay.mo").path,
                                             root.appendingPathComponent("resources/po/\(language).po").path])
        }
        return directory.path
    }()

    func ccrelay(_ arguments: [String], bus: PrivateBus?, language: String = "en_US.UTF-8") throws -> CommandResult {
        var environment = ["LANG": language, "LANGUAGE": "", "LC_ALL": "", "CCRELAY_LOCALEDIR": Self.localeDirectory]
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus?.address ?? "unix:path=/nonexistent/ccrelay-test-bus"
        return try run(Self.ccrelay, arguments, environment: environment)
    }

    @Test func everyKindReachesDunstInSimplifiedChinese() async throws {
        let bus = try PrivateBus()
        let dunst = try await Dunst(on: bus)
        let result = try ccrelay(["notify-test"], bus: bus, language: "zh_CN.UTF-8")
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("notification server: dunst"))
        #expect(result.standardOutput.contains("body-markup"))
        let history = try dunst.closeAllAndReadHistory()
        #expect(history.count == AlertKind.allCases.count)
        let byCategory = Dictionary(grouping: history, by: \.category)
        let required: [(String, String)] = [
            ("network.disconnected", "登录已被注销，请重新登录"), ("network.error", "保持在线失败"),
            ("x-ccrelay.location", "定位服务被禁止"), ("x-ccrelay.location", "未开启定位服务"),
            ("x-ccrelay.location", "定位服务未正确设置"), ("x-ccrelay.auth", "证书"),
            ("x-ccrelay.notice", "网络维护通知"), ("network.connected", "已恢复在线"),
        ]
        for (category, phrase) in required {
            let texts = (byCategory[category] ?? []).map { $0.summary + " " + $0.body }
            #expect(texts.contains { $0.contains(phrase) }, "\(category) lacks “\(phrase)”: \(texts)")
        }
        #expect(history.allSatisfy { $0.appName == "CC Relay" })
        // Each line of the report names a kind and the id dunst returned.
        let ids = Set(history.map(\.id))
        for line in result.standardOutput.split(separator: "\n").dropFirst(2) {
            let id = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst(2).first.flatMap { Int($0) }
            #expect(id.map(ids.contains) == true, "\(line)")
        }
    }

    @Test func traditionalChineseAndEnglishToo() async throws {
        let bus = try PrivateBus()
        let dunst = try await Dunst(on: bus)
        #expect(try ccrelay(["notify-test", "logged-out"], bus: bus, language: "zh_TW.UTF-8").status == 0)
        #expect(try ccrelay(["notify-test", "logged-out"], bus: bus, language: "en_US.UTF-8").status == 0)
        let bodies = try dunst.closeAllAndReadHistory().map(\.body)
        #expect(bodies.contains("你已被登出，請重新登入。"))
        #expect(bodies.contains("Your login was cancelled, please log in again."))
    }

    @Test func jsonReportIsOneValidObject() async throws {
        let bus = try PrivateBus()
        let dunst = try await Dunst(on: bus)
        let result = try ccrelay(["notify-test", "--json", "notice", "back-online"], bus: bus)
        #expect(result.status == 0, "\(result.standardError)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        let server = try #require(object["server"] as? [String: Any])
        #expect(server["name"] as? String == "dunst")
        #expect((server["capabilities"] as? [String])?.contains("actions") == true)
        let alerts = try #require(object["alerts"] as? [[String: Any]])
        #expect(alerts.map { $0["kind"] as? String } == ["notice", "back-online"])
        #expect(alerts.allSatisfy { ($0["id"] as? Int ?? 0) > 0 })
        #expect(try dunst.closeAllAndReadHistory().count == 2)
    }

    @Test func withoutASessionBusItSaysSoAndFails() throws {
        let result = try ccrelay(["notify-test"], bus: nil)
        #expect(result.status == 1)
        #expect(result.standardError.contains("cannot connect to the session bus"))
        #expect(result.standardOutput.isEmpty)
    }

    @Test func withoutANotificationServerAlertsAreLoggedOnceAndItFails() throws {
        let bus = try PrivateBus()
        let result = try ccrelay(["notify-test", "--wait", "1"], bus: bus)
        #expect(result.status == 1)
        let waiting = result.standardError.split(separator: "\n").filter { $0.contains("will show when one appears") }
        #expect(waiting.count == AlertKind.allCases.count, "each alert is written to stderr once: \(result.standardError)")
        #expect(result.standardError.contains("no notification server answered"))
    }

    @Test func anActivatableServerIsStartedThroughTheBusAndGetsEveryAlert() throws {
        // As on XFCE, MATE and UKUI: nobody owns the name, the bus can start a server.
        let bus = try PrivateBus(services: [notificationsName: "/usr/bin/dunst -config \(Dunst.configPath)"])
        let result = try ccrelay(["notify-test", "--wait", "20"], bus: bus)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(!result.standardError.contains("will show when one appears"), "no waiting: \(result.standardError)")
        #expect(result.standardOutput.contains("notification server: dunst"), "\(result.standardOutput)")
        #expect(result.standardOutput.split(separator: "\n").filter { $0.contains(" id ") }.count == AlertKind.allCases.count,
                "\(result.standardOutput)")
        let environment = bus.environment
        _ = try? run("/usr/bin/dunstctl", ["close-all"], environment: environment)
    }

    @Test func aServerThatAppearsLaterGetsEveryAlertOnce() async throws {
        let bus = try PrivateBus()
        var environment = bus.environment
        environment["CCRELAY_LOCALEDIR"] = Self.localeDirectory
        let child = try ChildProcess(Self.ccrelay, ["notify-test", "--wait", "30"], environment: environment)
        try await Task.sleep(for: .milliseconds(500))
        #expect(child.isRunning, "notify-test waits for a server")
        let dunst = try await Dunst(on: bus)
        #expect(await eventually(timeout: .seconds(30)) { !child.isRunning })
        #expect(child.wait() == 0)
        #expect(try dunst.closeAllAndReadHistory().count == AlertKind.allCases.count)
    }

    @Test func usageErrorsExitTwoWithAHint() throws {
        let badKind = try ccrelay(["notify-test", "loged-out"], bus: nil)
        #expect(badKind.status == 2)
        #expect(badKind.standardError.contains("did you mean 'logged-out'?"))
        let badOption = try ccrelay(["notify-test", "--wiat=3"], bus: nil)
        #expect(badOption.status == 2)
        #expect(badOption.standardError.contains("did you mean '--wait'?"))
        let badWait = try ccrelay(["notify-test", "--wait", "soon"], bus: nil)
        #expect(badWait.status == 2)
        let badCommand = try ccrelay(["notfy-test"], bus: nil)
        #expect(badCommand.status == 2)
        #expect(badCommand.standardError.contains("did you mean 'notify-test'?"))
        #expect(try ccrelay([], bus: nil).status == 2)
    }

    @Test func helpAndVersion() throws {
        let help = try ccrelay(["notify-test", "--help"], bus: nil)
        #expect(help.status == 0)
        #expect(help.standardOutput.contains("Usage: ccrelay notify-test"))
        #expect(help.standardOutput.contains("location-too-coarse"))
        #expect(try ccrelay(["notify-test", "-h"], bus: nil).standardOutput == help.standardOutput)
        let overview = try ccrelay(["--help"], bus: nil)
        #expect(overview.status == 0 && overview.standardOutput.contains("notify-test"))
        let version = try ccrelay(["--version"], bus: nil)
        #expect(version.status == 0)
        #expect(version.standardOutput.hasPrefix("ccrelay "))
    }
}
