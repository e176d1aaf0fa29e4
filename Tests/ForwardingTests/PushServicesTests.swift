import Foundation
import Testing
@testable import Forwarding

/// The registry is the one list of services (issue 34): names and schemes
/// are each taken once, every scheme reaches its service, and the man
/// page's lists name every service — a new service that is missing from them fails here.
@Suite struct PushServicesTests {
    @Test func eachNameAndSchemeBelongsToOneService() {
        let names = PushServices.all.map(\.name)
        #expect(Set(names).count == names.count, "\(names)")
        #expect(Set(PushServices.schemes).count == PushServices.schemes.count, "\(PushServices.schemes)")
        for service in PushServices.all {
            #expect(!service.schemes.isEmpty && service.messageRoom > 0, "\(service.name)")
            for scheme in service.schemes { #expect(PushServices.serving(scheme: scheme)?.name == service.name, "\(scheme)") }
            #expect(PushServices.named(service.name)?.title == service.title)
        }
        #expect(PushServices.configurationKeys == ["ntfy", "gotify", "webhook"])
    }

    @Test func theManPagesNameEveryServiceAndAScheme() throws {
        let packaging = #filePath.components(separatedBy: "/Tests/")[0] + "/packaging/"
        let page = try String(contentsOfFile: packaging + "ccrelay.1", encoding: .utf8)
        let configurationPage = try String(contentsOfFile: packaging + "ccrelay.conf.5", encoding: .utf8)
        let relayTest = try #require(page.components(separatedBy: "\\fBrelay test\\fR").dropFirst().first?.components(separatedBy: ".TP").first)
        for service in PushServices.all {
            #expect(relayTest.contains(service.name), "relay test's names: \(service.name)")
            #expect(service.schemes.contains { configurationPage.contains($0 + "://") }, "ccrelay.conf(5)'s forward URLs: \(service.schemes)")
        }
    }
}
