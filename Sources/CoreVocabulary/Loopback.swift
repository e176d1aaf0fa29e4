/// This computer, as plain `http://` may name it: the one place that says
/// which hosts a request may reach without TLS (the CC server's URL, a
/// forwarding target's). Only a literal address counts — a name such as
/// `127.evil.example` is a host anywhere on the internet.
public enum Loopback {
    /// Whether `host` (from a URL; IPv6 in brackets or not, any case) is
    /// `localhost`, an IPv4 address in 127.0.0.0/8 written as four decimal
    /// numbers, or `::1`.
    public static func isLoopbackHost(_ host: String) -> Bool {
        var bare = host.lowercased()
        if bare.hasPrefix("["), bare.hasSuffix("]") { bare = String(bare.dropFirst().dropLast()) }
        if bare == "localhost" || bare == "::1" || bare == "0:0:0:0:0:0:0:1" { return true }
        let octets = bare.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127"
            && octets.allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isASCII) && UInt8($0) != nil }
    }
}
