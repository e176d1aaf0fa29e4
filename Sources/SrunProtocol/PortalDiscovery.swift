/// Which kind of campus portal stands between this computer and the outside.
public enum PortalFamily: String, Sendable, Hashable, CaseIterable {
    /// Srun (深澜): `srun_portal…` pages, `/cgi-bin/get_challenge`.
    case srun
    /// Ruijie ePortal (锐捷): `/eportal/` pages.
    case ruijie
    /// Dr.COM (城市热点): pages that name Dr.COM.
    case drcom
    /// A redirect, or a page, of no known family.
    case other
    /// The URL answered itself (2xx, no redirect, no portal's sign): no portal in the way.
    case none
}

/// What following a URL by hand showed about the portal.
public struct PortalDiscovery: Sendable, Hashable {
    public var family: PortalFamily
    /// The Srun portal's base URL (`http://10.0.0.55/`), when the family is Srun.
    public var portal: String?
    /// `ac_id`, from `ac_id=N` or `index_N` in a URL on the way, else from the page's `ac_id` field.
    public var acID: String?
    /// The address the portal's page says this computer has (`ip : "…"`), when it gives a valid one.
    public var clientIP: String?
    /// The URLs fetched, in order (checked: printable ASCII, at most 2048 bytes each).
    public var trail: [String]

    public init(family: PortalFamily, portal: String? = nil, acID: String? = nil, clientIP: String? = nil, trail: [String] = []) {
        self.family = family
        self.portal = portal
        self.acID = acID
        self.clientIP = clientIP
        self.trail = trail
    }
}

/// Following a URL by hand, one answer at a time (a pure function of the
/// answers, so it is tested without a network): a 3xx `Location`, a
/// `<meta http-equiv="refresh" content="0;url=…">`, or a script's
/// `top.self.location.href='…'` / `window.location=…` in a small page
/// leads on, at most `hopLimit` times. Every URL on the way is read for
/// `ac_id` and a Srun page name, every page for `ac_id` and this computer's
/// address, and the page where the trail ends for its family's signs.
public struct PortalTrail: Sendable {
    /// The most redirects followed.
    public static let hopLimit = 5
    /// The most of a page that is read.
    static let pageLimit = 64 << 10
    /// The largest page whose script redirect is followed.
    static let stubLimit = 4096

    private var trail: [String]
    private var family: PortalFamily?
    private var portal: String?
    private var urlACID: String?
    private var pageACID: String?
    private var clientIP: String?
    private var redirected = false
    private var finalStatus = 0

    /// Starts at `url`; nil unless it is an http or https URL without credentials.
    public init?(start url: String) {
        guard let start = SrunURL(url), start.isWeb, !start.hasCredentials, SrunText.isToken(start.text, limit: 2048) else { return nil }
        trail = [start.text]
        note(start)
    }

    /// The URL to fetch now.
    public var current: String { trail[trail.count - 1] }

    /// What the trail shows so far.
    public var discovery: PortalDiscovery {
        let found: PortalFamily = family ?? (!redirected && (200...299).contains(finalStatus) ? .none : .other)
        return PortalDiscovery(family: found, portal: found == .srun ? portal : nil, acID: urlACID ?? pageACID, clientIP: clientIP, trail: trail)
    }

    /// Reads the answer to `current`; returns the next URL to fetch, or nil when the trail ends here.
    public mutating func read(status: Int, location: String?, body: [UInt8]) -> String? {
        let page = Array(body.prefix(Self.pageLimit))
        let lower = page.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }
        finalStatus = status
        pageACID = pageACID ?? Self.pageACID(page)
        clientIP = clientIP ?? Self.pageAddress(page)
        // A page that only sends the browser on is a stub: a refresh, or a
        // small page with a script (a portal's own page is large, and has
        // scripts that set the location for other reasons).
        let target: String? =
            switch status {
            case 300...399: location
            case 200...299: Self.metaRefresh(page, lower) ?? (page.count <= Self.stubLimit ? Self.scriptRedirect(page) : nil)
            default: nil
            }
        if trail.count <= Self.hopLimit, let target, let next = SrunURL(target, relativeTo: current), next.isWeb, !next.hasCredentials,
            SrunText.isToken(next.text, limit: 2048)
        {
            redirected = true
            trail.append(next.text)
            note(next)
            return next.text
        }
        if Self.contains(lower, ["srun_portal", "srun.portal", "/cgi-bin/get_challenge"]) { sighted(.srun, at: current) }
        if Self.contains(lower, ["dr.com", "drcom"]) { sighted(.drcom, at: current) }
        if Self.contains(lower, ["/eportal/", "ruijie"]) { sighted(.ruijie, at: current) }
        return nil
    }

    /// A URL's signs: `ac_id=N` or `index_N`, and a Srun portal's page name.
    private mutating func note(_ url: SrunURL) {
        let bytes = Array(url.text.utf8)
        urlACID = urlACID ?? Self.digits(after: "ac_id=", in: bytes) ?? Self.digits(after: "index_", in: bytes)
        if Self.contains(bytes.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, ["srun_portal"]) { sighted(.srun, at: url.text) }
    }

    /// The first family seen wins, Srun over the others (its pages may mention anything).
    private mutating func sighted(_ seen: PortalFamily, at url: String) {
        guard family == nil || (seen == .srun && family != .srun) else { return }
        family = seen
        if seen == .srun { portal = SrunURL(url)?.origin }
    }

    private static func contains(_ bytes: [UInt8], _ needles: [String]) -> Bool {
        needles.contains { bytes.firstRange(of: Array($0.utf8)) != nil }
    }

    /// 1–9 digits right after the first `marker` that has them.
    private static func digits(after marker: String, in bytes: [UInt8]) -> String? {
        var from = bytes.startIndex
        while let found = bytes[from...].firstRange(of: Array(marker.utf8)) {
            let run = bytes[found.upperBound...].prefix { (0x30...0x39).contains($0) }
            if (1...9).contains(run.count) { return String(decoding: run, as: UTF8.self) }
            from = found.upperBound
        }
        return nil
    }

    /// The page's `"ac_id" … value="N"` (a hidden form field), the last resort.
    private static func pageACID(_ page: [UInt8]) -> String? {
        guard let field = page.firstRange(of: Array("\"ac_id\"".utf8)) else { return nil }
        let tag = Array(page[field.upperBound...].prefix(200).prefix { $0 != UInt8(ascii: ">") })
        return digits(after: "value=\"", in: tag)
    }

    /// The page's `ip : "a.b.c.d"` (the portal's script), when it is an address.
    private static func pageAddress(_ page: [UInt8]) -> String? {
        var from = page.startIndex
        while let found = page[from...].firstRange(of: Array("ip".utf8)) {
            from = found.upperBound
            let rest = page[found.upperBound...].prefix(80).drop { $0 == 0x20 || $0 == 0x09 }
            guard rest.first == UInt8(ascii: ":") else { continue }
            let value = rest.dropFirst().drop { $0 == 0x20 || $0 == 0x09 }
            guard value.first == UInt8(ascii: "\"") else { continue }
            let literal = String(decoding: value.dropFirst().prefix { $0 != UInt8(ascii: "\"") }, as: UTF8.self)
            if let address = SrunText.address(literal) { return address }
        }
        return nil
    }

    /// `<meta http-equiv="refresh" content="0;url=…">`: the URL.
    private static func metaRefresh(_ page: [UInt8], _ lower: [UInt8]) -> String? {
        var from = lower.startIndex
        while let meta = lower[from...].firstRange(of: Array("<meta".utf8)) {
            let end = lower[meta.upperBound...].prefix(1024).firstIndex(of: UInt8(ascii: ">")) ?? min(meta.upperBound + 1024, lower.count)
            from = meta.upperBound
            let tag = lower[meta.upperBound..<end]
            guard tag.firstRange(of: Array("refresh".utf8)) != nil, let url = tag.firstRange(of: Array("url=".utf8)) else { continue }
            return quoted(page[url.upperBound..<end], terminators: [0x22, 0x27, 0x20, 0x3E])
        }
        return nil
    }

    /// A script's `location.href = '…'`, `location = "…"`, `location.replace('…')`: the URL.
    private static func scriptRedirect(_ page: [UInt8]) -> String? {
        var from = page.startIndex
        while let found = page[from...].firstRange(of: Array("location".utf8)) {
            from = found.upperBound
            var rest = page[found.upperBound...].prefix(2100)
            for call in [".href", ".replace(", ".assign("] where rest.starts(with: Array(call.utf8)) {
                rest = rest.dropFirst(call.utf8.count)
            }
            rest = rest.drop { $0 == 0x20 || $0 == 0x09 }
            if rest.first == UInt8(ascii: "=") {
                rest = rest.dropFirst()
                guard rest.first != UInt8(ascii: "=") else { continue }
            }
            rest = rest.drop { $0 == 0x20 || $0 == 0x09 }
            guard let quote = rest.first, quote == 0x22 || quote == 0x27,
                let url = quoted(rest.dropFirst(), terminators: [quote]), !url.isEmpty
            else { continue }
            return url
        }
        return nil
    }

    /// What comes before the first terminator, quotes and spaces before it dropped; nil past 2048 bytes.
    private static func quoted(_ text: ArraySlice<UInt8>, terminators: [UInt8]) -> String? {
        let value = text.drop { $0 == 0x22 || $0 == 0x27 || $0 == 0x20 }.prefix { !terminators.contains($0) }
        guard !value.isEmpty, value.count <= 2048 else { return nil }
        return String(decoding: value, as: UTF8.self)
    }
}
