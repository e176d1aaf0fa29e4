import CoreVocabulary

/// Where a push service takes messages, from a `forward = URL` line.
public struct PushAddress: Sendable, Hashable {
    /// The service's API: `https://host[:port]` (its public server, a
    /// self-hosted Bark server, or `api=`).
    public var base: String
    /// The device key, SendKey, token, webhook key or hook id, or bot token: a secret.
    public var key: String
    /// Telegram's chat (a number, or `@channel`).
    public var chat: String?
    /// DingTalk's or Feishu's signing secret.
    public var secret: String?

    /// The server, as shown (`api.day.app`).
    public var host: String { TargetURL(base)?.authority ?? base }

    /// Eight hex digits that tell two keys apart without saying either.
    public var fingerprint: String { Fingerprint.of(key + "/" + (chat ?? "")) }
}
