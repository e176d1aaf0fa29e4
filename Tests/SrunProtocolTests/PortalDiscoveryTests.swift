@testable import SrunProtocol
import Testing

/// Following a URL to the portal by hand, answer by answer, without a
/// network: each redirect form, `ac_id` from a URL or the page, the portal
/// families, the hop limit.
@Suite struct PortalDiscoveryTests {
    /// Plays `answers` (status, Location, page) along a trail from `start`.
    func follow(_ start: String, _ answers: [(Int, String?, String)]) throws -> PortalDiscovery {
        var trail = try #require(PortalTrail(start: start))
        for (index, (status, location, page)) in answers.enumerated() {
            let next = trail.read(status: status, location: location, body: Array(page.utf8))
            #expect((next == nil) == (index == answers.count - 1), "answer \(index) \(next == nil ? "ended" : "went on")")
            if next == nil { break }
        }
        return trail.discovery
    }

    static let srunPage = #"<html><script src="/static/js/jquery.srun.portal.js"></script><script>var CONFIG = { ip : "10.1.2.3", ajax: "/cgi-bin/get_challenge" };</script><input type="hidden" name="ac_id" id="ac_id" value="7"></html>"#

    @Test func aLocationToTheSrunPortalPage() throws {
        let found = try follow("http://www.bit.edu.cn/", [
            (302, "http://10.0.0.55/srun_portal_pc?ac_id=1&theme=bit", ""), (200, nil, Self.srunPage),
        ])
        #expect(found == PortalDiscovery(family: .srun, portal: "http://10.0.0.55/", acID: "1", clientIP: "10.1.2.3",
                                         trail: ["http://www.bit.edu.cn/", "http://10.0.0.55/srun_portal_pc?ac_id=1&theme=bit"]))
    }

    @Test func aRelativeLocationAndIndexN() throws {
        let found = try follow("http://10.0.0.55", [(302, "/index_12.html", ""), (200, nil, Self.srunPage)])
        #expect(found.family == .srun && found.portal == "http://10.0.0.55/" && found.acID == "12", "\(found)")
        #expect(found.trail == ["http://10.0.0.55/", "http://10.0.0.55/index_12.html"])
    }

    @Test func aMetaRefresh() throws {
        let stub = #"<html><head><META HTTP-EQUIV="Refresh" CONTENT="0; URL=http://172.17.1.2/srun_portal_pc?ac_id=5&theme=pro"></head></html>"#
        let found = try follow("http://example.com/", [(200, nil, stub), (200, nil, Self.srunPage)])
        #expect(found.family == .srun && found.portal == "http://172.17.1.2/" && found.acID == "5", "\(found)")
    }

    @Test(arguments: [
        #"<script>top.self.location.href='http://10.0.0.55/srun_portal_pc?ac_id=3'</script>"#,
        #"<script>window.location = "http://10.0.0.55/srun_portal_pc?ac_id=3";</script>"#,
        #"<script>if (location.href == "x") {} location.replace('http://10.0.0.55/srun_portal_pc?ac_id=3')</script>"#,
    ])
    func aScriptRedirect(_ stub: String) throws {
        let found = try follow("http://neverssl.com/", [(200, nil, stub), (200, nil, Self.srunPage)])
        #expect(found.family == .srun && found.portal == "http://10.0.0.55/" && found.acID == "3", "\(found)")
        #expect(found.trail.count == 2)
    }

    @Test func aLargePagesScriptsAreNotRedirects() throws {
        let page = Self.srunPage + "<script>function done() { location.href = 'http://10.0.0.55/srun_portal_success'; }</script>"
            + String(repeating: " ", count: 5000)
        let found = try follow("http://10.0.0.55/srun_portal_pc", [(200, nil, page)])
        #expect(found.family == .srun && found.trail == ["http://10.0.0.55/srun_portal_pc"])
        #expect(found.acID == "7", "from the page's ac_id field, the last resort")
    }

    @Test func theHopsAreBounded() throws {
        var trail = try #require(PortalTrail(start: "http://a.example/"))
        var hops = 0
        while trail.read(status: 302, location: "/next\(hops)", body: []) != nil { hops += 1 }
        #expect(hops == PortalTrail.hopLimit)
        #expect(trail.discovery.family == .other && trail.discovery.trail.count == PortalTrail.hopLimit + 1)
    }

    @Test func otherFamiliesAndNone() throws {
        let ruijie = #"<script>top.self.location.href='http://1.1.1.1/eportal/index.jsp?wlanuserip=10.1.2.3&nasip=10.0.0.1'</script>"#
        #expect(try follow("http://www.example.com/", [(200, nil, ruijie), (200, nil, "<html>Ruijie ePortal</html>")]).family == .ruijie)
        #expect(try follow("http://www.example.com/", [(302, "http://10.1.1.1/a79.htm", ""), (200, nil, "<title>Dr.COM WebLogin</title>")]).family
                == .drcom)
        #expect(try follow("http://connect.example/generate_204", [(204, nil, "")]).family == PortalFamily.none)
        #expect(try follow("http://www.example.com/", [(302, "http://10.1.1.1/login", ""), (200, nil, "<html>Welcome</html>")]).family == .other)
        #expect(try follow("http://www.example.com/", [(503, nil, "")]).family == .other)
        let srunFound = try follow("http://www.example.com/", [(200, nil, "<html>Dr.COM</html>" + Self.srunPage)])
        #expect(srunFound.family == .srun, "a Srun page may name anything: Srun's signs win")
    }

    @Test func hostileRedirectsEndTheTrail() throws {
        for target in ["javascript:alert(1)", "ftp://10.0.0.1/", "http://user:pw@10.0.0.55/", "http://10.0.0.55/a b",
                       "http://10.0.0.55/" + String(repeating: "a", count: 3000)] {
            var trail = try #require(PortalTrail(start: "http://www.example.com/"))
            #expect(trail.read(status: 302, location: target, body: []) == nil, "\(target)")
        }
        #expect(PortalTrail(start: "file:///etc/passwd") == nil && PortalTrail(start: "http://u:p@h/") == nil && PortalTrail(start: "not a url") == nil)
    }

    @Test func anACIDMustBeDigits() throws {
        let found = try follow("http://www.example.com/", [(302, "http://10.0.0.55/srun_portal_pc?ac_id=abc&x=index_", ""), (200, nil, "<html></html>")])
        #expect(found.family == .srun && found.acID == nil)
        let long = try follow("http://www.example.com/", [(302, "http://10.0.0.55/srun_portal_pc?ac_id=12345678901", ""), (200, nil, "")])
        #expect(long.acID == nil)
    }
}
