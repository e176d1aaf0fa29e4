import CCRelayCore
import Foundation
@testable import SrunProtocol
import SrunCodec
import Testing

/// The login's and the logouts' values against the end-to-end vectors of
/// the Srun protocol notes §8.3 (byte-exact), and the query they travel in.
@Suite struct LoginParameterTests {
    static let token = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
    static let browserInfo =
        "{SRBX1}XeZyRIj96CrbTet5A0MkVI71PG+TRVlmjg4J+MO7KyQNZnVp61YpFPFnmb0eJloq5URTEZa0WjD4vRMClsF47G3sMJZXd3HELFo5yb54UDPWBEPX8gNiUcqsWvbEVAFwehD4PvxBXYY="

    func form(_ digest: SrunSettings.Digest, username: String = "2024000001", password: String = "s3cret pw!") -> SrunLoginForm {
        SrunLoginForm(username: username, password: password, token: Self.token, ip: "10.1.2.3", acID: "1", digest: digest)
    }

    @Test("the Srun protocol notes §8.3: info, hmd5 and chksum, the portal's own HMAC-MD5(token, password)")
    func portalScriptForm() {
        let form = form(.hmac)
        #expect(form.info == Self.browserInfo)
        #expect(form.hmd5 == "0efbbecd17df0cd963697d0182b3e430")
        #expect(form.chksum == "a963499b18efa2519966ca7d310c03f19373938c")
        let parameters = Dictionary(uniqueKeysWithValues: form.parameters(doubleStack: false, os: "Linux", platform: "Linux").map { ($0.name, $0.value) })
        #expect(parameters["password"] == "{MD5}0efbbecd17df0cd963697d0182b3e430")
    }

    @Test("the Srun protocol notes §8.3: BIT's HMAC-MD5(token, \"\") (same info)")
    func bitForm() {
        let form = form(.hmacEmpty)
        #expect(form.info == Self.browserInfo)
        #expect(form.hmd5 == "12b7df856574be74a29fa124bd70e85d")
        #expect(form.chksum == "c3f535476bb1011db9f91ec5eb407e5543ec91c1")
    }

    @Test("the Srun protocol notes §8.3: Tsinghua's MD5(password), and the chksum of the sorted-key info")
    func tsinghuaForm() {
        #expect(form(.md5).hmd5 == "1c5813c28bd194d1953f93d397974640")
        #expect(form(.md5).info == Self.browserInfo, "ccrelay writes the browser's key order whatever the hmd5")
        let sortedInfo =
            "{SRBX1}0Y+fpk1ye9PcMXzpiX2pRF251a3NgoAOkErxPXqfHEFV9ksQeQuc4VBrrZ8PcIWQH1TzUC1Pq6GK01QRqdgyH2qpK9cpc+AjI3cOf070Hol0BXIYyECWbyky5ND0R949WDBVmeIftoH="
        #expect(SrunLoginForm.chksum(token: Self.token, username: "2024000001", hmd5: "1c5813c28bd194d1953f93d397974640", acID: "1",
                                     ip: "10.1.2.3", info: sortedInfo) == "5b103e849adea27fec5c1da7a93b2e1c0f133ca8")
    }

    @Test("the Srun protocol notes §8.3: the DM logout's sign")
    func dmSign() {
        #expect(SrunLogoutForm.sign(time: 1_700_000_000, username: "2024000001", ip: "10.1.2.3", unbind: "1")
                == "9f255247b0df3f154837fa1600bc144914106dde")
        let items = SrunLogoutForm.dm(username: "2024000001", ip: "10.1.2.3", time: 1_700_000_000)
        #expect(items.map(\.name) == ["ip", "username", "time", "unbind", "sign"])
        #expect(items.map(\.value) == ["10.1.2.3", "2024000001", "1700000000", "1", "9f255247b0df3f154837fa1600bc144914106dde"])
    }

    @Test func theUserNameWithItsDomainIsInsideInfoAndChksum() throws {
        let form = form(.hmac, username: "2024000001@cmcc")
        let json = try #require(SrunBase64.decode(String(form.info.dropFirst("{SRBX1}".count))).flatMap {
            XEncode.decode($0, key: Array(Self.token.utf8))
        })
        #expect(String(decoding: json, as: UTF8.self)
                == #"{"username":"2024000001@cmcc","password":"s3cret pw!","ip":"10.1.2.3","acid":"1","enc_ver":"srun_bx1"}"#)
        #expect(form.chksum == SrunLoginForm.chksum(token: Self.token, username: "2024000001@cmcc", hmd5: form.hmd5, acID: "1",
                                                    ip: "10.1.2.3", info: form.info))
        #expect(form.chksum != self.form(.hmac).chksum)
    }

    @Test func aPasswordWithQuotesAndBackslashesIsEscapedAsJSONStringifyDoes() throws {
        let form = form(.hmac, password: #"a"b\c"#)
        let json = try #require(SrunBase64.decode(String(form.info.dropFirst(7))).flatMap { XEncode.decode($0, key: Array(Self.token.utf8)) })
        #expect(String(decoding: json, as: UTF8.self).contains(#""password":"a\"b\\c""#))
    }

    @Test func theParametersComeInThePortalsOrderAndEveryValueIsPercentEncoded() throws {
        let items = form(.hmac).parameters(doubleStack: true, os: "Linux", platform: "Linux")
        #expect(items.map(\.name) == ["action", "username", "password", "ac_id", "ip", "chksum", "info", "n", "type", "os", "name", "double_stack"])
        #expect(items.last?.value == "1")
        let query = SrunQuery.string(items)
        #expect(query.contains("password=%7BMD5%7D0efbbecd17df0cd963697d0182b3e430"))
        #expect(query.contains("info=%7BSRBX1%7DXeZyRIj96CrbTet5A0MkVI71PG%2BTRVlmjg4J%2BMO7"))
        #expect(!query.contains("+") && !query.contains("{") && !query.contains("/") && !query.contains(" "))
        // A server's query parser gives the values back exactly.
        let parsed = try #require(URLComponents(string: "http://portal/?" + query)?.queryItems)
        #expect(parsed.map(\.name) == items.map(\.name))
        #expect(parsed.map { $0.value ?? "" } == items.map(\.value))
        #expect(SrunQuery.string([("os", "Windows 10")]) == "os=Windows%2010")
    }

    @Test func theFormNeverShowsWhatOpensThePassword() {
        let text = "\(form(.hmac))"
        #expect(!text.contains(Self.browserInfo) && !text.contains("0efbbecd") && !text.contains("a963499b"), "\(text)")
        let challenge = SrunChallenge(token: Self.token, clientIP: "10.1.2.3", expire: 60, serverVersion: nil)
        #expect(!"\(challenge)".contains(Self.token))
    }

    @Test(arguments: [
        ("s3cret pw!", nil), ("pässwort", SrunRequestError.passwordNotASCII), ("密码123", .passwordNotASCII), ("tab\there", .passwordNotASCII),
        ("", .passwordUnusable), (String(repeating: "x", count: 257), .passwordUnusable),
    ] as [(String, SrunRequestError?)])
    func aPasswordOutsidePrintableASCIIIsRefused(_ password: String, _ refusal: SrunRequestError?) {
        if let refusal {
            #expect(throws: refusal) { try SrunRequestError.check(user: "2024000001", password: password) }
            #expect(!refusal.description.contains(password) || password.isEmpty)
        } else {
            #expect(throws: Never.self) { try SrunRequestError.check(user: "2024000001", password: password) }
        }
    }

    @Test(arguments: ["", "with space", "naïve", String(repeating: "u", count: 129), "a\u{7}b"])
    func aUserNameOutsidePrintableASCIIIsRefused(_ user: String) {
        #expect(throws: SrunRequestError.userUnusable) { try SrunRequestError.check(user: user, password: "pw") }
    }

    @Test func theCallbackLooksLikeJQuerys() {
        let callback = SrunQuery.callback(milliseconds: 1_700_000_000_123, random: 42)
        #expect(callback == "jQuery112442_1700000000123")
        #expect(SrunQuery.callback(milliseconds: 1, random: .max).utf8.count <= 40)
    }
}
