import CCurl
import EventLoop
import CurlTransport
import CoreVocabulary
import Forwarding

/// Posts forwarded alerts, one at a time, answered on the shell's loop:
/// `ForwardPoster` over libcurl, or a scripted target in the shell's unit tests.
public protocol ForwardTransport: AnyObject {
    func post(_ request: ForwardRequest, completion: @escaping (ForwardAnswer) -> Void)
}

/// A relay target's HTTP client: its own libcurl easy and multi handles on
/// the daemon's loop, apart from the CC/1 client's, so a slow or hanging
/// target never holds up a keep-alive. Strict TLS (verification on, TLS 1.2
/// or newer, no redirects), no proxy (as for CC/1) but the target's own
/// `proxy=`, the URL's own scheme only, every request bounded
/// by `timeout`, at most 64 KiB of an answer read. The answer is judged by
/// its status once its head has come; what is kept of its text has the
/// request's own secrets taken out (`ForwardRequest.redacting`).
///
/// Confinement: used only on `loop`; one request at a time.
public final class ForwardPoster: ForwardTransport {
    private let loop: any EventScheduler
    private let caFile: String?
    private let userAgent: String
    private let timeout: Duration
    private var multi: CurlMulti?
    private var easy: CurlEasy?
    /// A request that could not start is answered after `post` returned.
    private lazy var later = LaterOnLoop(loop: loop)

    public init(caFile: String?, userAgent: String, timeout: Duration = .seconds(30), loop: any EventScheduler) {
        self.loop = loop
        self.caFile = caFile
        self.userAgent = userAgent
        self.timeout = timeout
    }

    /// POSTs `request` (or, for mail, sends it over SMTP); `completion` runs on the loop (never before this returns).
    public func post(_ request: ForwardRequest, completion: @escaping (ForwardAnswer) -> Void) {
        loop.preconditionIsCurrent("a relay target's client")
        if let envelope = request.mail { return send(request, envelope, completion: completion) }
        var headers: UnsafeMutablePointer<curl_slist>?
        for line in request.headers + ["Expect:", "Accept: application/json"] { headers = curl_slist_append(headers, line) }
        let response = ResponseBuffer(limit: Self.answerLimit)
        transfer(request, scheme: request.url.hasPrefix("http://") ? "http" : "https", response: response, list: headers,
                 completion: completion) { easy throws(ClientConfigurationError) in
            try easy.set(CURLOPT_HTTPHEADER, list: headers, "the headers")
            try easy.set(CURLOPT_POST, 1, "POST")
            try easy.set(CURLOPT_COPYPOSTFIELDS, request.body, "the message")
            _ = ccurl_setopt_header_function(easy.handle, takeResponseHeader)
            try easy.set(CURLOPT_HEADERDATA, pointer: Unmanaged.passUnretained(response).toOpaque(), "the answer buffer")
        } answer: { easy, code in
            let status = response.headComplete ? response.status : easy.info(CURLINFO_RESPONSE_CODE)
            let text = Self.printable(request.redacting(Self.text(response.bytes)))
            // A whole head is the target's answer: a 2xx is a delivery even
            // when its body is slow or endless (stopped at the limit), so
            // the alert is never sent again for it — unless a push service
            // says no in it (judged on all of it that was read).
            guard response.headComplete || code == CURLE_OK else {
                return ForwardAnswer(status: status, text: text, verdict: .retry(Self.printable(request.redacting(easy.failureText(code)))))
            }
            let verdict = request.rule.judge(status: status, body: String(decoding: response.bytes, as: UTF8.self))
            return ForwardAnswer(status: status, text: text, verdict: Self.shown(verdict, request))
        }
    }

    /// A mail over SMTP: implicit TLS for `smtps://`, STARTTLS required for
    /// `smtp://` (never plain text), the server verified, the login, the
    /// envelope, the message uploaded. The last SMTP reply code is the status.
    private func send(_ request: ForwardRequest, _ envelope: MailEnvelope, completion: @escaping (ForwardAnswer) -> Void) {
        var recipients: UnsafeMutablePointer<curl_slist>?
        for address in envelope.to { recipients = curl_slist_append(recipients, "<\(address)>") }
        let upload = UploadBuffer(Array(request.body.utf8))
        let replies = ResponseBuffer(limit: Self.answerLimit)
        transfer(request, scheme: request.url.hasPrefix("smtps://") ? "smtps" : "smtp", response: replies,
                 list: recipients, completion: completion) { easy throws(ClientConfigurationError) in
            // An http proxy carries SMTP only through a tunnel.
            if request.proxy != nil { try easy.set(CURLOPT_HTTPPROXYTUNNEL, 1, "a tunnel through the proxy") }
            try easy.set(CURLOPT_USE_SSL, Int(CURLUSESSL_ALL.rawValue), "TLS for the mail (STARTTLS)")
            try easy.set(CURLOPT_USERNAME, envelope.user, "the mail login")
            try easy.set(CURLOPT_PASSWORD, envelope.password, "the mail password")
            try easy.set(CURLOPT_MAIL_FROM, "<\(envelope.from)>", "the sender")
            try easy.set(CURLOPT_MAIL_RCPT, list: recipients, "the recipients")
            try easy.set(CURLOPT_UPLOAD, 1, "the message")
            try easy.set(CURLOPT_INFILESIZE, upload.bytes.count, "the message's size")
            _ = ccurl_setopt_read_function(easy.handle, readFromUploadBuffer)
            // Ownership: `upload` is retained by the answer closure below until the transfer is over.
            try easy.set(CURLOPT_READDATA, pointer: Unmanaged.passUnretained(upload).toOpaque(), "the message")
            // The server's replies, in its own words (libcurl hands them to the header function).
            _ = ccurl_setopt_header_function(easy.handle, takeResponseHeader)
            try easy.set(CURLOPT_HEADERDATA, pointer: Unmanaged.passUnretained(replies).toOpaque(), "the server's replies")
        } answer: { easy, code in
            let status = withExtendedLifetime(upload) { easy.info(CURLINFO_RESPONSE_CODE) }
            guard code != CURLE_OK else { return ForwardAnswer(status: status, text: replies.replies.last ?? "", verdict: .delivered) }
            guard status > 0 else { return ForwardAnswer(status: 0, text: "", verdict: .retry(Self.printable(request.redacting(easy.failureText(code))))) }
            // The server's last reply without its code (`5.7.1 Message rejected`), else libcurl's sentence.
            let words = replies.replies.last.map { String($0.dropFirst(4)) } ?? easy.failureText(code)
            // After the message's end (libcurl: a weird reply to it) or to DATA itself: this message; else the login or an address.
            let afterData = code == CURLE_WEIRD_SERVER_REPLY || easy.failureText(code).hasPrefix("DATA failed")
            let verdict = request.rule.judge(status: status, body: request.redacting(words), afterData: afterData)
            return ForwardAnswer(status: status, text: replies.replies.last.map { request.redacting($0) } ?? "", verdict: Self.shown(verdict, request))
        }
    }

    /// One transfer of either kind: the CC/1 client's transport rules for
    /// `scheme` (straight to the target whatever proxy the environment names,
    /// but the target's own `proxy=`), the time limits, the answer read into
    /// `response` (retained until the transfer is over, the only time curl
    /// writes to it); `configure` adds the request's own options. `list` is
    /// freed when it is over; a failed transfer drops the connection.
    private func transfer(_ request: ForwardRequest, scheme: String, response: ResponseBuffer, list: UnsafeMutablePointer<curl_slist>?,
                          completion: @escaping (ForwardAnswer) -> Void, configure: (CurlEasy) throws(ClientConfigurationError) -> Void,
                          answer: @escaping (CurlEasy, CURLcode) -> ForwardAnswer) {
        let easy = self.easy ?? CurlEasy()
        self.easy = easy
        easy.clearError()
        do throws(ClientConfigurationError) {
            try easy.set(CURLOPT_URL, request.url, "the target's URL")
            try easy.setStrictTransport(scheme: scheme, caFile: caFile, caFileName: "[relay] ca-file", userAgent: userAgent)
            // The target's own proxy (Telegram from China), never the environment's.
            if let proxy = request.proxy {
                try easy.set(CURLOPT_PROXY, proxy, "the target's proxy")
                try easy.set(CURLOPT_NOPROXY, "", "the target's proxy")
            }
            try easy.set(CURLOPT_CONNECTTIMEOUT_MS, 10_000, "the connect timeout")
            try easy.set(CURLOPT_TIMEOUT_MS, max(Int(timeout.components.seconds) * 1000, 1), "the request timeout")
            _ = ccurl_setopt_write_function(easy.handle, appendToResponseBuffer)
            try easy.set(CURLOPT_WRITEDATA, pointer: Unmanaged.passUnretained(response).toOpaque(), "the answer buffer")
            try configure(easy)
        } catch {
            curl_slist_free_all(list)
            return refuse(completion, error.description)
        }
        let multi = self.multi ?? CurlMulti(loop: loop)
        self.multi = multi
        let started = multi.start(easy) { [weak self] code in
            curl_slist_free_all(list)
            let result = withExtendedLifetime(response) { answer(easy, code) }
            // A failed transfer may leave the connection in any state: the next one starts afresh.
            if result.failure != nil { self?.multi = nil }
            completion(result)
        }
        if !started {
            curl_slist_free_all(list)
            refuse(completion, "libcurl refused to start the transfer")
        }
    }

    private func refuse(_ completion: @escaping (ForwardAnswer) -> Void, _ problem: String) {
        later.run { completion(ForwardAnswer(status: 0, text: "", verdict: .retry(problem))) }
    }

    /// The verdict as it may be logged and shown: the request's secrets out, printable, one line.
    private static func shown(_ verdict: ForwardVerdict, _ request: ForwardRequest) -> ForwardVerdict {
        let clean = { (text: String) in printable(request.redacting(text)) }
        return switch verdict {
        case .delivered: .delivered
        case .retry(let why): .retry(clean(why))
        case .refused(let why): .refused(clean(why))
        case .refusedForGood(let why): .refusedForGood(clean(why))
        }
    }

    /// The most of an answer that is read: the transfer stops there.
    static let answerLimit = 64 << 10

    /// The start of an answer as text, lines kept (for redacting by line).
    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes.prefix(4096), as: UTF8.self) }

    /// The first 300 printable characters of an answer (it is logged and shown), lines joined by spaces.
    static func printable(_ text: String) -> String { String(PrintableText.oneLine(text).prefix(300)) }
}
