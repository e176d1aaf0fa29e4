import CoreVocabulary

/// The command line of `ccsim --protocol srun`, and its part of `--help`.
struct SrunOptions: Sendable {
    /// What a login does when its account is at `--session-limit`.
    enum WhenFull: String, Sendable { case reject, kick }

    var acID = 1
    /// Sessions an account may hold; nil: no limit.
    var sessionLimit: Int?
    var whenFull = WhenFull.reject
    var strictHMD5 = false
    /// Names under which the simulator is the portal (besides its own address); empty: 10.0.0.55.
    var portalHosts: [String] = []

    /// The portal's names: those given, or BIT's 10.0.0.55 (what bitsrun hard-wires).
    var portalNames: [String] { portalHosts.isEmpty ? ["10.0.0.55"] : portalHosts }
}

extension Options {
    static let srunUsage = """
        Srun portal (--protocol srun):
          --ac-id N                the portal's ac_id (default 1)
          --user ID:PASSWORD       an account; ID exactly as clients send it, domain suffix
                                   included (e.g. 2024000001@cmcc)
          --session-limit N        sessions one account may hold (default: no limit)
          --when-full reject|kick  at the limit, answer the newcomer E2620 (reject, the
                                   default) or silently drop the account's oldest session
          --strict-hmd5            also require {MD5}hmd5 = HMAC-MD5(token, password), else
                                   sign_error (for a client's unit tests; real portals and
                                   the default accept any hmd5 that fits the chksum)
          --portal-host HOST       a name under which this is the portal (repeatable;
                                   default 10.0.0.55, as bitsrun hard-wires)
          --tls-cert/--tls-key     serve the portal over HTTPS (as at UCAS or Tsinghua)

          The portal also answers as a forward proxy: a request in absolute form
          (GET http://HOST/PATH) names its host, so a client with HTTP_PROXY pointed here
          reaches http://10.0.0.55 and any outside host (plain HTTP only; no CONNECT).
          Without absolute form the Host header names the host. The portal is this
          listener's own address, localhost, and every --portal-host; any other host
          is "the outside".

          GET /                    302 to /srun_portal_pc?ac_id=N&theme=pro
          GET /srun_portal_pc      the portal page: <input … name="ac_id" … value="N">
                                   and ip : "CLIENT"
          GET /cgi-bin/get_challenge, /cgi-bin/srun_portal (action=login|logout),
              /cgi-bin/rad_user_info, /cgi-bin/rad_user_dm
                                   JSONP: CALLBACK(compact JSON), nothing after it; plain
                                   JSON without callback (rad_user_info: the legacy text,
                                   "not_online_error" or "USER,ADD,KEEP,0,0,0,BYTES,SECS,IP")
          GET /v2/srun_portal_captcha_image_info
                                   404, or {"code":0,"data":"1"} while captcha is on
          the outside, any path    302 to http://PORTAL/srun_portal_pc?ac_id=N&theme=pro
                                   while the client is offline (PORTAL: the first portal
                                   name when asked as a proxy, else this listener), 200
                                   once it is online

          Decisions the protocol leaves open, as this simulator makes them:
          - A session belongs to the client's source address (bind clients to 127.0.0.2,
            127.0.0.3… to play several devices). The ip parameter is a hint: it enters
            the login's chksum only, and rad_user_info ignores it. rad_user_dm alone
            acts on its ip parameter (empty: the source address), as a RADIUS DM
            names an address.
          - A challenge is kept per (source address, username) for 60 s; asking again
            within that time gives the same token and the seconds left as "expire". A
            login answered error "ok" (granted, or ip_already_online_error) uses it up;
            a refused login leaves it.
          - Login checks run in this order: missing parameter (username, password,
            ac_id, chksum, info, n, type; ip may be empty) → captcha → challenge →
            chksum (the received value with trailing white space trimmed, compared to
            lowercase hex) → info (err_code=1 no {SRBX1} or not Srun base64, 2 xdecode
            fails, 3 not a JSON object with string username, password, ip, enc_ver and
            a string or number acid, 4 info's username is not the parameter's) →
            strict hmd5 → ac_id (the parameter's and info's) → unknown user E2531 →
            3 s interval E2532 → password E2553 → IP online → limit → granted.
          - The 3 s interval is per account, from the last login that reached it
            (refused or granted, E2553 included), not counting the ones it refused
            itself; scripted answers (next-login) do not count either.
          - missing_required_parameters_error, challenge_expire_error, sign_error and
            captcha_error are answered with error = res = that word and ecode "";
            error_msg is "" except for captcha_error ("Captcha is required: log in
            from a browser.") and a strict-hmd5 sign_error. INFO and BAS answers are
            error = res = login_error, ecode "".
          - While captcha is on, every login is answered captcha_error.
          - IP already online: error "ok", suc_msg "ip_already_online_error", whatever
            account holds the address; the session is left as it was.
          - A stale session (control API) makes every login of its account from any
            other address E2620, with or without a limit, and is never kicked; DM
            cannot remove it. MAC-bound sessions count towards the limit and are never
            kicked; a login from their address is ip_already_online_error, and a
            logout answers ok (rad_user_dm: logout_ok) but leaves them online.
          - action=logout ignores ac_id; username must be the session's account
            ("You are not online." otherwise). rad_user_dm's username may lack the
            domain suffix; time is not checked for freshness.
          - Reported values: sum_bytes, sum_seconds, balances and the like are numbers,
            group_id, products_id, package_id and online_device_total strings;
            online_device_detail is a JSON string keyed by rad_online_id, each with ip,
            ip6, class_name (the login's name), os_name (its os), add_time (a number)
            and user_mac.

        Srun control API (JSON bodies; answers JSON):
          GET    /control/sessions        every session, oldest first: account, ip, since
                                          (Unix), device_class, os, mac, kind (login |
                                          device | mac-bound | stale), rad_online_id,
                                          access_token
          POST   /control/sessions        {"account": ID, "ip": A, "kind"?: "device" |
                                           "mac-bound" | "stale", "device_class"?, "os"?,
                                           "mac"?}: a session that no login made: another
                                          device of the account (a phone at 10.x.x.x;
                                          in kick mode at the limit it drops the oldest),
                                          a MAC-bound address (online without a login),
                                          or a stale session on an old address;
                                          answers {"sessions": N} (the account's)
          DELETE /control/sessions        {"ip"?: A, "account"?: ID} ends those sessions
                                          (all when empty) with no reason: a server-side
                                          logout; answers {"sessions": N ended}
          GET    /control/stats           {"connections": N, "requests": N} on the portal
          GET    /control/requests        the portal's request log, oldest first (the last
                                          1000): method, host, path, params (names only,
                                          never values), peer; DELETE clears it
          POST   /control/next-login      {"ecode"?: "E2553", "error"?: WORD or TEXT,
                                           "error_msg"?: TEXT, "count"?: N (default 1)}:
                                          the next N logins (after the missing-parameter
                                          check) are answered so and change nothing. With
                                          ecode: error login_error, error_msg default
                                          "E…: <the usual text>" (E2531, E2532, E2553,
                                          E2606, E2616, E2620, E2901, E3001, E3004).
                                          A lowercase word (no_response_data_error,
                                          challenge_expire_error…): error = res = it.
                                          Other text ("INFO failed, BAS respond
                                          timeout."): login_error with that error_msg.
                                          DELETE clears them
          POST   /control/slow-challenge  {"seconds": 16, "count"?: N (default: forever)}:
                                          get_challenge answers that late (its 60 s
                                          run from the asking); DELETE: at once
          POST   /control/next-challenge  {"token": 64 lowercase hex}: the token of the next
                                          new challenge (for fixed test vectors)
          POST   /control/captcha         {"on": true | false}
          POST   /control/account         {"account"?: ID, FIELD: VALUE…}: what
                                          rad_user_info reports for the account (every
                                          account without "account"): user_balance,
                                          wallet_balance, user_charge, sum_bytes,
                                          sum_seconds, remain_bytes, remain_seconds,
                                          bytes_in, bytes_out, products_name,
                                          billing_name, real_name, domain; a number or a
                                          string, sent as given
        """
}
