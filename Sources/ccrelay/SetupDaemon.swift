import DBusAsync
import DesktopServices

/// What setup says last about the daemon of this session, as the session
/// bus tells it: one ran already (it reads the new configuration by
/// itself), one was started now, or how to start one.
enum SetupDaemon {
    /// Whether a daemon owns ccrelay's name on the session bus now.
    static func runs() async -> Bool {
        guard let client = try? await ControlClient.connect(systemServiceToo: false) else { return false }
        defer { client.close() }
        let owner = try? await client.connection.nameOwner(ControlNames.busName)
        return (owner ?? nil) != nil
    }

    /// Starts ccrelay at login (unless `autostart` is false) and now, and says
    /// how it stands; `ranBefore`: a daemon ran before setup wrote the file.
    static func finish(autostart: Bool, ranBefore: Bool) async {
        let enabled = autostart && systemctlUser(["enable", "--now", "ccrelay.service"])
        if ranBefore {
            Output.out(enabled
                ? localize("ccrelay runs already and reads the new configuration by itself; it starts at every login (systemctl --user enable ccrelay).")
                : localize("ccrelay runs already and reads the new configuration by itself."))
        } else if enabled {
            Output.out(localize("ccrelay runs now and starts at every login (systemctl --user enable --now ccrelay)."))
        } else if !autostart {
            Output.out(localize("ccrelay does not run in this session now, and setup did not start it (--no-autostart); to start it: ccrelay daemon"))
        } else if await startThroughTheBus() {
            Output.out(localize("ccrelay runs now (started through the session bus) and starts at every login (the desktop's autostart entry)."))
        } else if await runs() {
            Output.out(localize("ccrelay runs now (the session bus started it; it has not answered yet: ccrelay status shows how it stands) and starts at every login."))
        } else {
            Output.out(localize("ccrelay starts at your next login (the desktop's autostart entry); to start it now: ccrelay daemon"))
        }
    }

    /// What a change of forwarding alone means for the daemon: a running one reads it by itself.
    static func sayAfterForwarding(daemonRuns: Bool) {
        Output.out(daemonRuns
            ? localize("ccrelay runs already and reads the new configuration by itself.")
            : localize("ccrelay does not run in this session now; it forwards to the new target once it runs (ccrelay status starts it)."))
    }

    /// Without systemd: the bus starts the daemon (its D-Bus service file) for a first call.
    private static func startThroughTheBus() async -> Bool {
        guard let client = try? await ControlClient.connect(systemServiceToo: false) else { return false }
        defer { client.close() }
        return (try? await client.call("GetStatus", timeout: .seconds(30))) != nil
    }
}
