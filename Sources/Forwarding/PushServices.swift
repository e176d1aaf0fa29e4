/// Every service alerts can be forwarded to, once: the scheme list,
/// `setup --forward`'s and the man page's lists (checked against it by
/// their tests), `relay test`'s names and the `[relay]` keys come from here.
public enum PushServices {
    public static let all: [any PushService] = [
        Bark(), ServerChan(), PushPlus(), WeCom(), DingTalk(), Feishu(), Telegram(), Mail(), Ntfy(), Gotify(), Webhook(),
    ]

    /// The schemes `forward =` takes, Apprise's names for them.
    public static var schemes: [String] { all.flatMap(\.schemes) }

    /// The services with a `[relay]` key of their own (`ntfy = URL`).
    static var web: [any WebService] { all.compactMap { $0 as? any WebService } }

    /// Their keys: `ntfy`, `gotify`, `webhook`.
    public static var configurationKeys: [String] { web.map(\.configurationKey) }

    /// The service called `name` (`bark`), if any.
    public static func named(_ name: String) -> (any PushService)? { all.first { $0.name == name } }

    static func serving(scheme: String) -> (any PushService)? { all.first { $0.schemes.contains(scheme) } }
}
