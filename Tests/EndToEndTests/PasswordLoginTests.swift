import CCProtocol
import CCProtocolAsync
import DBus
import DBusAsync
import Foundation
import DesktopServices
import TestSupport
import Testing

/// Password login: `ccrelay login --save-password` stores the password in a
/// real gnome-keyring, the Secret Service client reads it back, and the CC/1
/// client logs in with it.
@Suite(.desktopBudget) struct PasswordLoginTests {
    static let ccrelay = buildProductsDirectory.appendingPathComponent("ccrelay").path

    @Test func savedPasswordLogsIn() async throws {
        let bus = try PrivateBus()
        let keyring = try await GnomeKeyring(on: bus)
        let saved = try run(Self.ccrelay, ["login", "--save-password", "--user", "20231234", "--password-stdin"],
                            environment: bus.environment, input: "correct horse 密码\n")
        #expect(saved.status == 0, "\(saved.standardError)")
        #expect(saved.standardOutput.contains("Saved the campus password of 20231234"))
        #expect(!saved.standardOutput.contains("correct horse") && !saved.standardError.contains("correct horse"))

        let connection = try bus.connect(label: "secrets")
        let secrets = StoredPasswords(connection: connection)
        #expect(try await secrets.password(user: "20231234") == "correct horse 密码")
        #expect(try await secrets.password(user: "someone-else") == nil)

        // Saving again replaces the item instead of adding a second one.
        #expect(try run(Self.ccrelay, ["login", "--save-password", "--user", "20231234", "--password-stdin"],
                        environment: bus.environment, input: "new one").status == 0)
        #expect(try await secrets.password(user: "20231234") == "new one")

        let sim = try CCSimProcess(tls: false, ["--user", "20231234:new one"])
        let client = try CCClient(configuration: ServerConfiguration(url: sim.url), client: ClientInfo(version: "1"), loop: TestLoop.shared)
        let password = try await secrets.password(user: "20231234")
        guard case .loggedIn = await client.login(device: "d", user: "20231234", password: password).outcome else {
            Issue.record("the stored password must log in")
            return
        }
        #expect(try sim.sessions().first?["user"] as? String == "20231234")
        withExtendedLifetime(keyring) {}
    }

    /// On a bus without a running keyring, D-Bus activation may start one
    /// with no unlocked collection: either way the user is told what is missing.
    @Test func withoutAKeyringItSaysWhatIsMissing() throws {
        let bus = try PrivateBus()
        let result = try run(Self.ccrelay, ["login", "--save-password", "--user", "20231234", "--password-stdin"],
                             environment: bus.environment, input: "pw\n")
        #expect(result.status == 1)
        #expect(result.standardError.contains("no keyring") || result.standardError.contains("no default collection"),
                "\(result.standardError)")
        let noUser = try run(Self.ccrelay, ["login", "--save-password"], environment: bus.environment)
        #expect(noUser.status == 2 && noUser.standardError.contains("--user"))
        let help = try run(Self.ccrelay, ["login", "--help"])
        #expect(help.status == 0 && help.standardOutput.contains("Secret Service"))
    }
}

/// The keyring's passwords, awaited (SecretService answers on its connection's loop).
private struct StoredPasswords {
    let connection: Connection

    func password(user: String) async throws(DBusError) -> String? {
        let connection = self.connection
        let result: Result<String?, DBusError> = await withCheckedContinuation { continuation in
            connection.loop.execute { SecretService(connection: connection).password(user: user) { continuation.resume(returning: $0) } }
        }
        return try result.get()
    }
}
