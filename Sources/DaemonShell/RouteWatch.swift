import CLinux
import EventLoop
import DesktopServices
import FileAccess
import CCRelayCore
#if canImport(Glibc)
import Glibc
#endif

/// Network changes without NetworkManager (a server on systemd-networkd or
/// ifupdown): an rtnetlink socket on the daemon's loop hears links, addresses
/// and routes change. A burst of messages is one look: the socket goes quiet
/// (its watch asleep) while a short timer runs, then the routes and the link
/// are read once (`/proc/net/route`, `/proc/net/ipv6_route`,
/// `/sys/class/net/IF`) and compared with the last look (`RouteRules`). No polling.
final class RouteWatch {
    private let loop: any EventScheduler
    private let interface: String?
    private let log: (String) -> Void
    private let onEvent: (DaemonEvent) -> Void
    private var descriptor: Int32 = -1
    private var watch: (any IOWatch)?
    private var settle: (any LoopTimer)?
    private var last: RouteRules.Look?
    /// How long a burst may go on before the routes are read.
    static let quiet: Duration = .milliseconds(200)

    init(loop: any EventScheduler, interface: String?, log: @escaping (String) -> Void, onEvent: @escaping (DaemonEvent) -> Void) {
        self.loop = loop
        self.interface = interface
        self.log = log
        self.onEvent = onEvent
    }

    /// Opens the socket and takes the first look (said only when the network is not there).
    func start() {
        loop.preconditionIsCurrent()
        guard descriptor < 0 else { return }
        let made = socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), NETLINK_ROUTE)
        guard made >= 0 else {
            return log("cannot follow network changes without NetworkManager (netlink: \(SystemError.reason(errno)))")
        }
        var address = sockaddr_nl()
        address.nl_family = sa_family_t(AF_NETLINK)
        address.nl_groups = UInt32(RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(made, $0, socklen_t(MemoryLayout<sockaddr_nl>.size)) }
        }
        guard bound == 0 else {
            log("cannot follow network changes without NetworkManager (netlink bind: \(SystemError.reason(errno)))")
            close(made)
            return
        }
        descriptor = made
        watch = loop.watch(made, for: .readable) { [weak self] _ in self?.burstBegan() }
        settle = loop.makeTimer { [weak self] in self?.burstEnded() }
        log("following network changes through netlink (no NetworkManager)")
        let first = look()
        last = first
        if let event = RouteRules.event(from: nil, to: first, interface: interface) { onEvent(event) }
    }

    func stop() {
        watch?.cancel()
        watch = nil
        settle?.disarm()
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
        last = nil
    }

    deinit { stop() }

    /// The first message of a burst: the rest are read together, a moment later.
    private func burstBegan() {
        drain()
        watch?.update([])
        settle?.arm(after: Self.quiet)
    }

    private func burstEnded() {
        drain()
        watch?.update(.readable)
        let now = look()
        if let event = RouteRules.event(from: last, to: now, interface: interface) { onEvent(event) }
        last = now
    }

    /// Reads every message waiting (their content is not needed: the files say the state).
    private func drain() {
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT)) > 0 {}
    }

    private func look() -> RouteRules.Look {
        RouteRules.look(
            ipv4: Self.text("/proc/net/route"), ipv6: Self.text("/proc/net/ipv6_route"), interface: interface,
            operstate: interface.map { Self.text("/sys/class/net/\($0)/operstate") },
            flags: interface.map { Self.text("/sys/class/net/\($0)/flags") },
            carrierChanges: interface.map { Self.text("/sys/class/net/\($0)/carrier_changes") })
    }

    private static func text(_ path: String) -> String {
        guard case .success(let bytes) = BoundedFile.read(path, limit: 1 << 20) else { return "" }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// What the routing table and the bound link say, and what a change of them
/// means to the session: pure, so that the rules are tested on text.
enum RouteRules {
    struct Look: Equatable {
        /// Every usable default route, as `interface gateway`, sorted.
        var defaultRoutes: [String]
        /// The bound interface's link is up (nil: no interface is bound).
        var linkUp: Bool?
        /// How often the bound link's carrier came or went since it was made (nil: unbound or unknown):
        /// a link that came up and went down again within one burst is a change.
        var carrierChanges: Int? = nil

        /// Outside access can be tried: the bound link is up. Unbound, the routes
        /// alone never say "no network" (a campus LAN may reach its CC server
        /// without a default route); a new one only calls for a fresh connection.
        var online: Bool { linkUp ?? true }
    }

    static func look(ipv4: String, ipv6: String, interface: String?, operstate: String?, flags: String?, carrierChanges: String? = nil) -> Look {
        var routes: [String] = []
        // Iface Destination Gateway Flags RefCnt Use Metric Mask …: a default route has destination and mask 0.
        for line in ipv4.split(separator: "\n").dropFirst() {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 8, fields[1] == "00000000", fields[7] == "00000000", usable(fields[3]) else { continue }
            routes.append("\(fields[0]) \(fields[2])")
        }
        // Destination PrefixLength Source SourcePrefix NextHop Metric RefCnt Use Flags Iface.
        for line in ipv6.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 10, fields[1] == "00", fields[0].allSatisfy({ $0 == "0" }), fields[9] != "lo", usable(fields[8]) else { continue }
            routes.append("\(fields[9]) \(fields[4])")
        }
        var linkUp: Bool?
        if interface != nil {
            let state = (operstate ?? "").filter { !$0.isWhitespace }
            // /sys/class/net/IF/flags: 0x1003; IFF_UP is 0x1.
            let up = flags.flatMap { UInt32($0.filter { !$0.isWhitespace }.dropFirst(2), radix: 16) }.map { $0 & 1 != 0 } ?? false
            linkUp = state == "up" || (state == "unknown" && up)
        }
        let changes = interface == nil ? nil : carrierChanges.flatMap { Int($0.filter { !$0.isWhitespace }) }
        return Look(defaultRoutes: routes.sorted(), linkUp: linkUp, carrierChanges: changes)
    }

    /// A route that is up (RTF_UP) and not a reject route (RTF_REJECT).
    private static func usable(_ hexFlags: Substring) -> Bool {
        guard let flags = UInt32(hexFlags, radix: 16) else { return false }
        return flags & 0x1 != 0 && flags & 0x200 == 0
    }

    /// What a change means: the bound link gone → no network; back → online
    /// (a fresh connection and a keep-alive at once); another default route
    /// while online → the same (the kept connection may be on the old path).
    /// A link down at both looks whose carrier came and went between them (one
    /// burst: up, then down again) went down too: the daemon may have gone
    /// online meanwhile (a link still settling reads "down" for up to a second
    /// after it carries, and a login through it goes through). Each says which
    /// interface, for the timeline.
    static func event(from old: Look?, to new: Look, interface: String?) -> DaemonEvent? {
        let link = interface ?? "the bound interface"
        guard let old else { return new.online ? nil : .network(online: false, why: "the network went down: \(link)'s link is down (netlink)") }
        guard new.online else {
            guard old.online || old.carrierChanges != new.carrierChanges else { return nil }
            return .network(online: false, why: "the network went down: \(link)'s link went down (netlink)")
        }
        if !old.online { return .network(online: true, why: "\(link)'s link came back (netlink)") }
        if old.defaultRoutes != new.defaultRoutes && !new.defaultRoutes.isEmpty {
            let via = new.defaultRoutes.map { $0.split(separator: " ").first.map(String.init) ?? $0 }
            return .network(online: true, why: "the default route changed: via \(Array(Set(via)).sorted().joined(separator: ", ")) (netlink)")
        }
        return nil
    }
}
