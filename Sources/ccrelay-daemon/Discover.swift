import CCRelayCore
import CoreVocabulary
import DaemonShell
import DesktopServices
import EventLoop
import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// `ccrelay-daemon --discover [--interface IF] [URL ...]`: what an anonymous
/// GET of plain-http pages shows of the campus portal — `ccrelay setup`'s
/// offer (the CLI does not link libcurl). The URLs are asked in turn until
/// one answers (by default the outside probe's, which a captive portal
/// redirects); no login, no configuration read. One fact a line on standard
/// output, `NAME<TAB>VALUE`, in this order, each only when known:
///
///     from       the URL that answered (or the last one asked)
///     family     srun | ruijie | drcom | other | none | unreachable
///     landing    scheme://host[:port]/ where the redirects ended
///     portal     a Srun portal's base URL
///     ac_id      its access controller (digits)
///     client_ip  the address the portal sees this computer at
///     srun_ver   the Srun portal's version (its rad_user_info)
///     online     yes | no: whether the Srun portal has a session for this address
///     error      why no URL answered (family unreachable)
///
/// Exit status 0 when a URL answered, 1 when none did, 2 on a usage error.
/// Bounded: `deadline` in all. Ends with the program that started it.
enum Discover {
    static let deadline = Duration.seconds(15)

    static func run(_ arguments: [String]) -> Never {
        _ = ccrelay_die_with_parent(SIGKILL)
        var urls = arguments
        var interface: String?
        if urls.first == "--interface" {
            guard urls.count >= 2 else { usage() }
            interface = urls[1]
            urls.removeFirst(2)
        }
        guard !urls.contains(where: { $0.hasPrefix("-") }) else { usage() }
        let loop: EventLoop
        do {
            loop = try EventLoop()
        } catch {
            say("family", "unreachable")
            say("error", "cannot start: \(error)")
            exit(1)
        }
        PortalSurvey.run(
            urls: urls.isEmpty ? Configuration.defaultProbeURLs : urls, interface: interface, caFile: nil, user: nil, budget: deadline,
            userAgent: "ccrelay/\(ccrelayVersion)", loop: loop
        ) { outcome in
            switch outcome {
            case .found(let facts):
                say("from", facts.from)
                say("family", facts.family.rawValue)
                say("landing", facts.landing)
                say("portal", facts.portal)
                say("ac_id", facts.acID)
                say("client_ip", facts.clientIP)
                say("srun_ver", facts.serverVersion)
                say("online", facts.online.map { $0 ? "yes" : "no" })
                exit(0)
            case .unreachable(let from, let why):
                say("from", from)
                say("family", "unreachable")
                say("error", why)
                exit(1)
            }
        }
        // The survey is bounded; this is for a loop that hangs anyway.
        let timer = loop.makeTimer {
            say("family", "unreachable")
            say("error", "no answer within \(deadline.components.seconds) s")
            exit(1)
        }
        timer.arm(after: deadline + .seconds(2))
        withExtendedLifetime(timer) { loop.run() }
        exit(1)
    }

    private static func usage() -> Never {
        log("usage: ccrelay-daemon --discover [--interface IF] [URL ...]")
        exit(2)
    }

    /// `name<TAB>value`; the value came from the network, checked, and is cleaned once more.
    private static func say(_ name: String, _ value: String?) {
        guard let value else { return }
        // Tabs and line breaks become spaces: the value stays in its field.
        let line = name + "\t" + PrintableText.oneLine(value) + "\n"
        _ = line.withCString { write(1, $0, strlen($0)) }
    }
}
