import CoreVocabulary

/// E-mail (`mailtos://USER:PASS@HOST[:PORT]/?to=ADDR[,ADDR…][&from=ADDR]`:
/// implicit TLS, port 465; `mailto://…`: STARTTLS, required, port 587; the
/// password percent-encoded): the alert as a plain-text mail (`MailMessage`)
/// sent over SMTP with the login. The last SMTP reply code is the answer: a
/// 5xx refuses the message when it came at the message's end, the target
/// otherwise (login, sender, recipient); a 4xx is a try-again.
struct Mail: PushService {
    let name = "mail"
    let title = "E-mail"
    let schemes = ["mailto", "mailtos"]
    let options: Set<String> = ["to", "from"]
    let messageRoom = 32_000

    func target(_ url: ForwardURL, text: String, proxy: String?) throws(ForwardTargetProblem) -> ForwardTarget {
        ForwardTarget(service: self, url: text, mail: try Self.address(url), proxy: proxy)
    }

    func request(_ content: PushContent, to target: ForwardTarget) -> ForwardRequest {
        // Its targets always have their address: `target(_:text:proxy:)` made them.
        guard let mail = target.mail else { return ForwardRequest(url: target.url, headers: [], body: "", proxy: target.proxy, rule: .smtp) }
        return ForwardRequest(
            url: mail.server, headers: [], body: MailMessage.text(content.alert, message: content.message, from: mail.from, to: mail.to),
            proxy: target.proxy, rule: .smtp, secretValues: [mail.user, mail.password],
            mail: MailEnvelope(from: mail.from, to: mail.to, user: mail.user, password: mail.password))
    }

    /// `USER:PASS@HOST[:PORT]` and `to=`, `from=` (the user when it is an
    /// address, else USER@ the host without its `smtp.`: QQ Mail's 12345 at smtp.qq.com is 12345@qq.com).
    static func address(_ parsed: ForwardURL) throws(ForwardTargetProblem) -> MailAddress {
        let scheme = parsed.scheme
        let example = "\(scheme)://USER:PASSWORD@smtp.example.com/?to=you@example.com"
        guard parsed.segments.count == 1, let at = parsed.segments[0].lastIndex(of: "@") else {
            throw ForwardTargetProblem { localize in
                TextTemplate.fill(localize("%s:// needs the login, the server and to=, such as %s (a password with @ or : in it written %40, %3A)"),
                                  scheme, example)
            }
        }
        let login = parsed.segments[0][..<at]
        let authority = String(parsed.segments[0][parsed.segments[0].index(after: at)...])
        guard let colon = login.firstIndex(of: ":"), let user = PercentEncoding.decode(String(login[..<colon])),
            let password = PercentEncoding.decode(String(login[login.index(after: colon)...])), !user.isEmpty, !password.isEmpty,
            let server = TargetURL("https://" + authority), !server.authority.contains("@")
        else {
            throw ForwardTargetProblem { localize in TextTemplate.fill(localize("%s:// needs USER:PASSWORD@HOST[:PORT], such as %s"), scheme, example) }
        }
        let host = TargetURL.host(of: server.authority)
        let port = server.authority.dropFirst(host.count).dropFirst()
        let implicit = parsed.scheme == "mailtos"
        let recipients = (parsed.options["to"] ?? "").split(separator: ",").map(String.init)
        guard (1...5).contains(recipients.count), recipients.allSatisfy(isMailbox) else {
            throw ForwardTargetProblem { localize in TextTemplate.fill(localize("to= must be one to five mail addresses separated by commas, such as %s"), example) }
        }
        let from = parsed.options["from"] ?? (isMailbox(user) ? user : user + "@" + (host.hasPrefix("smtp.") ? String(host.dropFirst(5)) : host))
        guard isMailbox(from) else { throw ForwardTargetProblem { localize in TextTemplate.fill(localize("from= must be a mail address, got '%s'"), from) } }
        return MailAddress(server: (implicit ? "smtps://" : "smtp://") + host + ":" + (port.isEmpty ? (implicit ? "465" : "587") : port),
                           user: user, password: password, from: from, to: recipients)
    }

    /// `local@domain`: printable, no spaces, brackets, quotes or commas; at most 254 characters.
    static func isMailbox(_ text: String) -> Bool {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        return parts.count == 2 && !parts[0].isEmpty && parts[1].contains(".") && text.utf8.count <= 254
            && text.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F && !"<>()[],;:\"\\".unicodeScalars.contains($0) }
    }
}
