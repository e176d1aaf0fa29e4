import FoundationEssentials
import Synchronization

/// The Srun (深澜) portal the simulator plays with `--protocol srun`: its routes,
/// its face as a forward proxy for the outside, and the request log. The
/// protocol's rules live in `SrunState` (SrunLogin, SrunStatus); all state is
/// behind `state`.
final class SrunPortal: Sendable {
    let state: Mutex<SrunState>
    let clock = ContinuousClock()
    /// This listener's own base URL (`http://127.0.0.1:PORT/`), set once it is bound.
    let ownURL = Mutex("")
    private let listenAddress: String

    init(options: SrunOptions, users: [String: String], listenAddress: String) {
        state = Mutex(SrunState(options: options, users: users))
        self.listenAddress = listenAddress
    }

    private var options: SrunOptions { state.withLock { $0.options } }

    func handle(_ http: HTTPRequest) -> HTTPReply {
        let request = SrunRequest(http)
        state.withLock {
            $0.record(SrunLogEntry(
                method: request.method, host: request.host, path: request.path, params: request.parameters.map(\.name),
                peer: request.peer))
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            return SrunReply.text(405, "only GET\n", headers: [("Allow", "GET, HEAD")])
        }
        guard isPortal(request.host) else { return outside(request) }
        let now = clock.now
        let time = Int(Date().timeIntervalSince1970)
        switch request.path {
        case "/":
            return redirect(to: portalPage)
        case "/srun_portal_pc":
            return SrunReply.text(200, page(for: request))
        case "/cgi-bin/get_challenge":
            let (fields, delay) = state.withLock { $0.challengeAnswer(request, now: now) }
            return SrunReply.answer(request, fields, delayMilliseconds: delay)
        case "/cgi-bin/srun_portal":
            switch request["action"] {
            case "login": return SrunReply.answer(request, state.withLock { $0.login(request, now: now, time: time) })
            case "logout": return SrunReply.answer(request, state.withLock { $0.logout(request) })
            default: return SrunReply.answer(request, SrunReply.failure("missing_required_parameters_error"))
            }
        case "/cgi-bin/rad_user_info":
            let (fields, legacy) = state.withLock { $0.status(request, time: time) }
            guard request["callback"].map({ !$0.isEmpty }) == true else { return SrunReply.text(200, legacy, type: "text/plain") }
            return SrunReply.answer(request, fields)
        case "/cgi-bin/rad_user_dm":
            return SrunReply.answer(request, state.withLock { $0.disconnect(request) })
        case "/v2/srun_portal_captcha_image_info":
            guard state.withLock({ $0.captcha }) else { return SrunReply.text(404, "404 page not found\n", type: "text/plain") }
            return SrunReply.text(200, #"{"code":0,"data":"1"}"#, type: "application/json")
        default:
            return SrunReply.text(404, "404 page not found\n", type: "text/plain")
        }
    }

    /// The portal is this listener's address, localhost, every --portal-host, and
    /// any request that names no host at all.
    private func isPortal(_ host: String) -> Bool {
        host.isEmpty || host == listenAddress || host == "localhost" || options.portalNames.contains(host)
    }

    private var portalPage: String { "/srun_portal_pc?ac_id=\(options.acID)&theme=pro" }

    /// Another host: the captive redirect while the source address is offline, a page once online.
    private func outside(_ request: SrunRequest) -> HTTPReply {
        if state.withLock({ $0.session(at: request.peer) != nil }) {
            return SrunReply.text(200, "<html><body>ccsim: \(request.host) (you are online)</body></html>\n")
        }
        let base = request.proxied ? "http://\(options.portalNames[0])" : String(ownURL.withLock { $0 }.dropLast())
        return redirect(to: base + portalPage)
    }

    private func redirect(to location: String) -> HTTPReply {
        SrunReply.text(302, "<a href=\"\(location)\">portal</a>\n", headers: [("Location", location)])
    }

    /// What BitSrunLoginGo and GoAuthing scrape: the ac_id input, `ip : "…"` and the enc version.
    private func page(for request: SrunRequest) -> String {
        """
        <!DOCTYPE html>
        <html><head><meta charset="utf-8"><title>ccsim Srun portal</title></head>
        <body>
        <form id="login">
        <input type="hidden" name="ac_id" id="ac_id" value="\(options.acID)">
        <input type="text" name="username" id="username">
        <input type="password" name="password" id="password">
        </form>
        <script>
        var CONFIG = {
            ip : "\(request.peer)",
            nas : "",
            mac : "",
            double_stack : "0",
        };
        var enc = "s" + "run" + "_bx1";
        </script>
        </body></html>

        """
    }
}
