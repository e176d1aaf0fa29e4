@testable import ccrelay
import Forwarding
import Testing

/// `setup --forward`'s help lists the push services from the registry's
/// (issue 34): a new service missing from it fails here. The three with an
/// option of their own (--ntfy, --gotify, --webhook) are named by those.
@Suite struct ForwardHelpTests {
    /// Mail is not in setup's help yet: its text waits for the translators (ccrelay.conf(5) has it).
    static let notYetInTheHelp: Set<String> = ["mail"]

    @Test func setupsHelpNamesEveryPushService() {
        let forwardOption = SetupCommand.usage.components(separatedBy: "  --forward URL").dropFirst().first?
            .components(separatedBy: "--p12-password-stdin").first ?? ""
        let withOptions = Set(PushServices.configurationKeys)
        for service in PushServices.all where !withOptions.contains(service.name) && !Self.notYetInTheHelp.contains(service.name) {
            #expect(service.schemes.contains { forwardOption.contains($0 + "://") }, "\(service.name) in: \(forwardOption)")
        }
        // The URLs are documented with the [relay] keys, in ccrelay.conf(5).
        #expect(forwardOption.split(whereSeparator: \.isWhitespace).joined(separator: " ").contains("(see man ccrelay.conf)"), "\(forwardOption)")
    }
}
