import CCRelayCore
import CoreVocabulary

/// A request to the Srun portal: the host it was meant for, its path and its query.
struct SrunRequest: Sendable {
    /// Parameters read from one query at the most; the rest are ignored.
    static let parameterLimit = 64

    var method: String
    /// The host asked for, lowercased and without a port: from an absolute-form
    /// target, else from the Host header ("" when there is none).
    var host: String
    /// True when the target was in absolute form: the client took us for its proxy.
    var proxied: Bool
    var path: String
    /// The query in order, decoded (`+` as a space); a name without `=` has the value "".
    var parameters: [(name: String, value: String)]
    /// The client's source address.
    var peer: String

    init(_ request: HTTPRequest) {
        method = request.method
        peer = request.peer
        var target = Substring(request.target)
        var authority: Substring?
        for scheme in ["http://", "https://"] where target.lowercased().hasPrefix(scheme) {
            let rest = target.dropFirst(scheme.count)
            let end = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
            authority = rest[..<end]
            target = rest[end...]
        }
        proxied = authority != nil
        host = Self.hostName(authority ?? Substring(request.host ?? ""))
        let query = target.firstIndex(of: "?")
        let rawPath = query.map { target[..<$0] } ?? target
        path = rawPath.isEmpty ? "/" : PercentEncoding.decode(String(rawPath)) ?? String(rawPath)
        parameters = query.map { Self.parameters(target[target.index(after: $0)...]) } ?? []
    }

    /// The first value of `name`, or nil when it is not in the query.
    subscript(name: String) -> String? {
        parameters.first { $0.name == name }?.value
    }

    /// `user@host:port` or `[v6]:port` → `host` / `v6`, lowercased.
    private static func hostName(_ authority: Substring) -> String {
        var host = authority.split(separator: "@").last ?? ""
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
            host = host[host.index(after: host.startIndex)..<close]
        } else if let colon = host.firstIndex(of: ":") {
            host = host[..<colon]
        }
        return host.lowercased()
    }

    private static func parameters(_ query: Substring) -> [(name: String, value: String)] {
        query.split(separator: "&", omittingEmptySubsequences: true).prefix(parameterLimit).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let decoded = parts.map { PercentEncoding.decode($0, plusIsSpace: true) ?? $0 }
            return (decoded[0], decoded.count > 1 ? decoded[1] : "")
        }
    }
}
