import DesktopServices
#if canImport(Glibc)
import Glibc
#endif

/// Forwarding for the system service: a box without a desktop hears of a
/// logout only through it, so setup asks for a target — any service
/// `--forward` takes, as the user's setup offers — and places a campus
/// target's CA file among the service's own files.
extension SystemSetup {
    /// Asks for a forwarding target; the `[relay]` key and URL typed, or nil for none.
    static func askForwarding() -> (String, String)? {
        Output.out(localize("Forward alerts to your phone? Push services (see man ccrelay.conf):"))
        Output.out(localize("  bark://DEVICE_KEY (Bark), schan://SENDKEY (ServerChan), pushplus://TOKEN (PushPlus),"))
        Output.out(localize("  wecombot://KEY (WeCom), dingtalk://TOKEN (DingTalk), feishu://HOOK_ID (Feishu),"))
        Output.out(localize("  tgram://BOT_TOKEN/CHAT_ID (Telegram), ntfy://ntfy.sh/TOPIC or https://ntfy.sh/TOPIC (ntfy)"))
        Output.prompt(localize("Forwarding URL (empty: the system log only)") + ": ")
        let typed = (readLine(strippingNewline: true) ?? "").filter { !$0.isWhitespace }
        guard !typed.isEmpty else { return nil }
        // An https:// URL is an ntfy topic, as this question took before any other service.
        let web = typed.lowercased().hasPrefix("https://") || typed.lowercased().hasPrefix("http://")
        return (web ? "ntfy" : "forward", typed)
    }

    /// Copies `source` (a PEM CA file) as `name` into the service's files folder
    /// beside the configuration at `path`; its final path, or nil after saying why not.
    static func place(_ source: String, as name: String, beside path: String, account: (user: uid_t, group: gid_t)) -> String? {
        let folder = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        guard let staging = Staging(in: folder) else { return nil }
        defer { staging.discard() }
        guard let staged = staging.stage(source, as: .caFile, name: name),
            let placed = staging.commit(to: filesFolder(configuration: path), account: account)?[staged]
        else {
            SetupCleanup.removeAll()
            return nil
        }
        SetupCleanup.forget(placed)
        return placed
    }
}
