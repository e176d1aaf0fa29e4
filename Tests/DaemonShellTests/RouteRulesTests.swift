@testable import DaemonShell
import CCRelayCore
import Testing

/// The netlink watch's rules on the kernel's own text (issue 24).
@Suite struct RouteRulesTests {
    static let ipv4 = """
        Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
        eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0
        eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0
        """
    static let ipv6 = """
        fe800000000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000002 00000000 00000001     eth0
        00000000000000000000000000000000 00 00000000000000000000000000000000 00 fd000000000000000000000000000001 00000400 00000002 00000000 00000003     eth0
        00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo
        """

    @Test func theDefaultRoutesAreReadAndRejectRoutesLeftOut() {
        let look = RouteRules.look(ipv4: Self.ipv4, ipv6: Self.ipv6, interface: nil, operstate: nil, flags: nil)
        #expect(look.defaultRoutes == ["eth0 010200C0", "eth0 fd000000000000000000000000000001"])
        #expect(look.linkUp == nil && look.online)
    }

    @Test func theBoundLinkDecidesWhetherThereIsANetwork() {
        let up = RouteRules.look(ipv4: Self.ipv4, ipv6: "", interface: "eth0", operstate: "up\n", flags: "0x1003\n")
        let down = RouteRules.look(ipv4: Self.ipv4, ipv6: "", interface: "eth0", operstate: "down\n", flags: "0x1002\n")
        let tunnel = RouteRules.look(ipv4: "", ipv6: "", interface: "tun0", operstate: "unknown\n", flags: "0x10d1\n")
        #expect(up.online && !down.online && tunnel.online)
        #expect(RouteRules.event(from: up, to: down, interface: "eth0") == .network(online: false, why: "the network went down: eth0's link went down (netlink)"))
        #expect(RouteRules.event(from: down, to: up, interface: "eth0") == .network(online: true, why: "eth0's link came back (netlink)"))
        #expect(RouteRules.event(from: nil, to: down, interface: "eth0") == .network(online: false, why: "the network went down: eth0's link is down (netlink)"),
                "said at start")
        #expect(RouteRules.event(from: nil, to: up, interface: "eth0") == nil)
        // Read "down" while it settled (a login went through it), then up and down again in one burst:
        // the carrier's count of changes says it went down.
        let settling = RouteRules.look(ipv4: "", ipv6: "", interface: "eth0", operstate: "down\n", flags: "0x1003\n", carrierChanges: "1\n")
        let downAgain = RouteRules.look(ipv4: "", ipv6: "", interface: "eth0", operstate: "down\n", flags: "0x1002\n", carrierChanges: "3\n")
        #expect(!settling.online && settling.carrierChanges == 1)
        #expect(RouteRules.event(from: settling, to: downAgain, interface: "eth0") == .network(online: false, why: "the network went down: eth0's link went down (netlink)"))
        #expect(RouteRules.event(from: downAgain, to: downAgain, interface: "eth0") == nil, "another link's burst says nothing of this one")
        #expect(RouteRules.look(ipv4: "", ipv6: "", interface: nil, operstate: nil, flags: nil, carrierChanges: "4").carrierChanges == nil)
    }

    @Test func aNewDefaultRouteCallsForAFreshConnectionAndNoRouteIsNotNoNetwork() {
        let none = RouteRules.look(ipv4: "", ipv6: "", interface: nil, operstate: nil, flags: nil)
        let one = RouteRules.look(ipv4: Self.ipv4, ipv6: "", interface: nil, operstate: nil, flags: nil)
        #expect(none.online, "a campus LAN may reach its server without a default route")
        #expect(RouteRules.event(from: none, to: one, interface: nil) == .network(online: true, why: "the default route changed: via eth0 (netlink)"))
        #expect(RouteRules.event(from: one, to: one, interface: nil) == nil, "an address added changes nothing")
        #expect(RouteRules.event(from: one, to: none, interface: nil) == nil)
    }
}
