import CCRelayCore
import Testing

/// The keyfile parser of ccrelay.conf: every key, and every error with its line.
@Suite struct ConfigurationParserTests {
    func parse(_ text: String) -> ConfigurationParser.Result {
        ConfigurationParser.parse(text, file: "/home/s/.config/ccrelay/ccrelay.conf", home: "/home/s", localize: .english)
    }

    @Test func theDesignExampleParses() throws {
        let result = parse("""
            # ccrelay configuration
            [server]
            url = https://cc.campus.example/     ; required
            ca-file = /etc/ssl/campus-ca.pem      ; optional
            pinned-key = sha256//YhKJKSzoTt2b5FP18fvpHo7fJYqQCjAa3HWY3tvRMwE=
            interface = wlan0
            [auth]
            certificate = ~/.config/ccrelay/student.pem
            key = ~/.config/ccrelay/student.key
            user = 20231234
            [keepalive]
            warn-before = 90
            auto-relogin = false
            logout-on-exit = yes
            [location]
            mode = always
            [notifications]
            notices = off
            """)
        #expect(result.errors.isEmpty, "\(result.errors)")
        #expect(result.warnings.isEmpty, "\(result.warnings)")
        let c = try #require(result.configuration)
        #expect(c.serverURL == "https://cc.campus.example/")
        #expect(c.caFile == "/etc/ssl/campus-ca.pem")
        #expect(c.pinnedKey == "sha256//YhKJKSzoTt2b5FP18fvpHo7fJYqQCjAa3HWY3tvRMwE=")
        #expect(c.interface == "wlan0")
        #expect(c.certificate == "/home/s/.config/ccrelay/student.pem")
        #expect(c.key == "/home/s/.config/ccrelay/student.key")
        #expect(c.user == "20231234")
        #expect(c.warnBefore == 90 && !c.autoRelogin && c.logoutOnExit && !c.notices)
        #expect(c.locationMode == .always)
    }

    @Test func defaultsApply() throws {
        let c = try #require(parse("[server]\nurl = https://cc.example/\n[auth]\nuser = s1").configuration)
        #expect(c.warnBefore == 60 && c.autoRelogin && !c.logoutOnExit && c.notices && c.locationMode == .auto)
        #expect(c.locationSource == .auto)
        let portal = try #require(parse("[server]\nurl = https://cc.example/\n[location]\nsource = portal").configuration)
        #expect(portal.locationSource == .portal)
    }

    @Test(arguments: [
        ("[server]\nurl = http://cc.example/", 2, "plain http only to a loopback"),
        ("[server]\nurl = https://x/\n[keepalive]\nwarn-before = soon", 4, "warn-before must be a number"),
        ("[server]\nurl = https://x/\n[keepalive]\nauto-relogin = maybe", 4, "must be true or false"),
        ("[server]\nurl = https://x/\n[location]\nmode = sometimes", 4, "mode must be off, auto or always"),
        ("[server]\nurl = https://x/\n[location]\nsource = gps", 4, "source must be auto, geoclue or portal"),
        ("[server]\nurl = https://x/\npinned-key = abc", 3, "pinned-key must be sha256//"),
        ("[server]\nurl = https://x/\nca-file = relative.pem", 3, "absolute path"),
        ("url = https://x/", 1, "before any group"),
        ("[server\nurl = https://x/", 1, "group header"),
        ("[server]\nurl https://x/", 2, "expected 'key = value'"),
        ("[auth]\nuser = s", 0, "[server] url is required"),
    ])
    func badValuesAreErrorsWithTheirLine(_ text: String, _ line: Int, _ words: String) {
        let result = parse(text)
        #expect(result.configuration == nil)
        let issue = result.errors.first { $0.message.contains(words) }
        #expect(issue?.line == line, "\(result.errors)")
        #expect(issue?.description.hasPrefix("/home/s/.config/ccrelay/ccrelay.conf:") == true)
    }

    @Test func unknownKeysAndGroupsAreWarningsWithSuggestions() throws {
        let result = parse("[server]\nurl = https://x/\nca-flie = /a.pem\n[extra]\nthing = 1\n[auth]\nuser = s\nuser = t")
        #expect(result.configuration?.user == "t", "the last value wins")
        #expect(result.warnings.map(\.line) == [3, 4, 8])
        #expect(result.warnings[0].message.contains("did you mean 'ca-file'?"))
        #expect(result.warnings[2].message.contains("first on line 7"))
    }
}

/// Files as editors and careless users write them.
@Suite struct ConfigurationParserFaultTests {
    @Test func windowsLineEndsAndAByteOrderMarkParse() throws {
        let text = "\u{FEFF}[server]\r\nurl = https://cc.campus.example/\r\n[keepalive]\r\nwarn-before = 30\r\n"
        let result = ConfigurationParser.parse(text, file: "f", home: "/h", localize: .english)
        #expect(result.errors.isEmpty, "\(result.errors)")
        #expect(result.warnings.allSatisfy { $0.line == 0 }, "no line is misread: \(result.warnings)")
        #expect(result.configuration?.serverURL == "https://cc.campus.example/")
        #expect(result.configuration?.warnBefore == 30)
    }

    @Test func controlCharactersAreErrorsNamingTheirLine() {
        let nul = ConfigurationParser.parse("[server]\nurl = https://x/\u{0}.evil/\n", file: "f", home: "/h", localize: .english)
        #expect(nul.configuration == nil && nul.errors.first?.line == 2)
        let tab = ConfigurationParser.parse("[server]\nurl = https://x/\tevil\n", file: "f", home: "/h", localize: .english)
        #expect(tab.configuration == nil && tab.errors.first?.description.contains("f:2: url must not contain") == true)
    }

    func parse(_ text: String) -> ConfigurationParser.Result {
        ConfigurationParser.parse(text, file: "/home/s/.config/ccrelay/ccrelay.conf", home: "/home/s", localize: .english)
    }

    @Test func theLineOfEveryKeyIsKeptForLaterChecks() {
        let result = ConfigurationParser.parse("[server]\n\nurl = https://x/\n[auth]\nkey = /k\ncertificate = /c\n", file: "f", home: "/h", localize: .english)
        #expect(result.configuration?.lines == ["server.url": 3, "auth.key": 5, "auth.certificate": 6])
    }

    /// issue 20: plain http was allowed to any host whose name began with
    /// "127." or "localhost"; only a literal loopback address (or localhost) counts.
    @Test(arguments: ["http://127.evil.example/", "http://localhost.evil.example/", "http://127.0.0.1.nip.io/",
                      "http://1270.0.0.1/", "http://[::2]/", "http://127.0.0/"])
    func plainHTTPToAHostThatOnlyLooksLikeLoopbackIsRefused(url: String) {
        let server = parse("[server]\nurl = \(url)\n")
        #expect(server.configuration == nil && server.errors.first?.line == 2, "\(url): \(server.errors)")
        let relay = parse("[server]\nurl = https://cc.example/\n[relay]\nwebhook = \(url)hook\n")
        #expect(relay.configuration == nil && relay.errors.first?.line == 4, "\(url): \(relay.errors)")
    }

    @Test(arguments: ["http://127.0.0.1:8080/", "http://127.1.2.3/", "http://localhost:9/", "http://[::1]:8080/"])
    func plainHTTPToALoopbackAddressIsAccepted(url: String) {
        #expect(parse("[server]\nurl = \(url)\n[relay]\nwebhook = \(url)hook\n").configuration != nil, "\(url)")
    }

    /// issue 20: a server URL with `user:password@` was accepted and shown verbatim.
    @Test func aServerURLWithAPasswordIsRefusedWithoutShowingIt() {
        let result = parse("[server]\nurl = https://student:hunter2-secret@cc.example/\n")
        #expect(result.configuration == nil)
        #expect(result.errors.first?.line == 2 && result.errors.first?.message.contains("user name or password") == true, "\(result.errors)")
        #expect(!"\(result.errors)".contains("hunter2-secret"))
    }

    /// issue 20: a [relay] line without its `=` was echoed whole, credentials and all
    /// (as an error, or, when its query has an `=`, as an unknown target type).
    @Test func aRelayLineWithoutItsEqualsSignIsShownWithoutItsSecrets() {
        let noEquals = parse("[server]\nurl = https://cc.example/\n[relay]\nwebhook https://u:pw-secret@hooks.example/x\n")
        #expect(noEquals.errors.first?.line == 4, "\(noEquals.errors)")
        // Issue 31.8: not even the path (a token, often).
        #expect(!"\(noEquals.errors)".contains("pw-secret") && !"\(noEquals.errors)".contains("/x"), "\(noEquals.errors)")
        let queryEquals = parse("[server]\nurl = https://cc.example/\n[relay]\ngotify https://u:pw-secret@g.example/message?token=tok-secret\n")
        let said = "\(queryEquals.errors) \(queryEquals.warnings)"
        #expect(queryEquals.warnings.first?.line == 4, "\(said)")
        #expect(!said.contains("tok-secret") && !said.contains("pw-secret") && !said.contains("g.example/message"), "\(said)")
    }
}

/// `[server] protocol = srun` and `[srun]` (issue 32).
@Suite struct SrunConfigurationTests {
    static func parse(_ text: String) -> ConfigurationParser.Result { ConfigurationParser.parse(text, file: "c.conf", home: "/home/s", localize: .english) }

    @Test func aSrunPortalOnPlainHTTPIsTakenWithAWarning() throws {
        let result = Self.parse("""
            [server]
            protocol = srun
            url = http://10.0.0.55/
            [auth]
            user = 2024000001
            [srun]
            ac-id = 5
            domain = @cmcc
            hmd5 = hmac-empty
            double-stack = true
            poll = 120
            logout = dm
            """)
        let c = try #require(result.configuration, "\(result.errors)")
        #expect(c.serverProtocol == .srun && c.srun.acID == 5 && c.srun.domain == "@cmcc" && c.srun.digest == .hmacEmpty)
        #expect(c.srun.doubleStack && c.srun.poll == 120 && c.srun.logout == .dm)
        #expect(result.warnings.contains { $0.line == 3 && $0.message.contains("read the password") }, "\(result.warnings)")
    }

    @Test func theDefaultsAreCC1AndAutoAndAFileWithoutTheKeyIsAsBefore() throws {
        let c = try #require(Self.parse("[server]\nurl = https://cc.example/\n[auth]\nuser = x").configuration)
        #expect(c.serverProtocol == .cc1 && c.srun == SrunSettings() && c.srun.acID == nil && c.srun.poll == 60)
        let plain = Self.parse("[server]\nurl = http://10.0.0.55/\n[auth]\nuser = x")
        #expect(plain.configuration == nil && plain.errors.first?.message.contains("protocol = srun") == true, "\(plain.errors)")
    }

    @Test(arguments: [
        ("ac-id = five", "ac-id must be auto or"), ("poll = 5", "poll must be a number of seconds from 10"), ("hmd5 = sha1", "hmd5 must be"),
        ("logout = kick", "logout must be portal or dm"), ("double-stack = maybe", "double-stack must be true or false"),
        ("domain = @c m", "domain must be"),
    ])
    func badSrunValuesAreErrorsWithTheirLine(_ line: String, _ expected: String) {
        let result = Self.parse("[server]\nprotocol = srun\nurl = http://10.0.0.55/\n[auth]\nuser = x\n[srun]\n\(line)")
        #expect(result.errors.first?.line == 7 && result.errors.first?.message.contains(expected) == true, "\(result.errors)")
    }

    @Test func aSrunPortalNeedsAUserAndTakesNoCertificate() {
        let noUser = Self.parse("[server]\nprotocol = srun\nurl = http://10.0.0.55/")
        #expect(noUser.errors.contains { $0.message.contains("logs in with [auth] user") }, "\(noUser.errors)")
        let certificate = Self.parse("[server]\nprotocol = srun\nurl = http://10.0.0.55/\n[auth]\nuser = x\ncertificate = /c.pem\nkey = /k.pem")
        #expect(certificate.errors.contains { $0.line == 6 && $0.message.contains("not a certificate") }, "\(certificate.errors)")
        let stray = Self.parse("[server]\nurl = https://cc.example/\n[auth]\nuser = x\n[srun]\npoll = 30")
        #expect(stray.warnings.contains { $0.line == 6 && $0.message.contains("only with [server] protocol = srun") }, "\(stray.warnings)")
    }
}
