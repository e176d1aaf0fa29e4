/// One service alerts are forwarded to: how its `forward =` URL is written
/// and read, the request it takes, how its answer says yes (and whose fault
/// a no is), what it is called and how much of a message it shows. Each
/// lives in a file of its own (`Services/`) and is listed once in
/// `PushServices.all`, from which the scheme list, `relay test`'s names and
/// the checks of the help and the man page come.
public protocol PushService: Sendable {
    /// Its name in outbox names, logs and `ccrelay relay test TARGET`
    /// (`bark`): part of every queued alert's row, so never changed.
    var name: String { get }
    /// As people know it (`Bark`).
    var title: String { get }
    /// The `forward =` schemes it takes, Apprise's names (`bark`, `barks`).
    var schemes: [String] { get }
    /// The options its URL takes besides `proxy=` and `limit=` (`api`, `secret`, `to`, `from`).
    var options: Set<String> { get }
    /// The longest message text (title and body, UTF-8 bytes: never fewer
    /// than the UTF-16 units some services count) it shows whole; a digest
    /// carries no more alerts than fit (`ForwardDigest.fitting`).
    var messageRoom: Int { get }
    /// Its budget unless `limit=` gives one.
    var defaultBudget: ForwardBudget? { get }
    /// Reads a `forward =` URL of one of its schemes (its options are checked already).
    func target(_ url: ForwardURL, text: String, proxy: String?) throws(ForwardTargetProblem) -> ForwardTarget
    /// The request that carries `content` to `target` (one it made), with the rule its answer is judged by.
    func request(_ content: PushContent, to target: ForwardTarget) -> ForwardRequest
}

extension PushService {
    public var options: Set<String> { [] }
    public var defaultBudget: ForwardBudget? { nil }
}

/// A push service whose targets have a `PushAddress` (every one but the three web services and mail).
protocol KeyedPushService: PushService {
    func request(_ content: PushContent, to push: PushAddress, proxy: String?) -> ForwardRequest
}

extension KeyedPushService {
    public func request(_ content: PushContent, to target: ForwardTarget) -> ForwardRequest {
        // Its targets always have their address: `target(_:text:proxy:)` made them.
        request(content, to: target.push ?? PushAddress(base: target.url, key: ""), proxy: target.proxy)
    }

    /// The target of `push`, as `forward = text` named it.
    func target(_ push: PushAddress, text: String, proxy: String?) -> ForwardTarget {
        ForwardTarget(service: self, url: text, push: push, proxy: proxy)
    }

    /// A request that carries the address's key and secret (never in what an answer shows), judged by `rule`.
    func post(_ url: String, _ body: String, _ rule: AnswerRule, _ content: PushContent, _ push: PushAddress, _ proxy: String?)
        -> ForwardRequest
    {
        ForwardRequest(url: url, headers: content.headers, body: body, proxy: proxy, rule: rule,
                       secretValues: [push.key, push.secret].compactMap { $0 })
    }
}
