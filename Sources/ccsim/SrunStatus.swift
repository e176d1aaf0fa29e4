import SrunCodec

/// `rad_user_info`, `action=logout` and `rad_user_dm`.
extension SrunState {
    /// rad_user_info: the JSON fields (§2.4), or the legacy text when there is no callback.
    func status(_ request: SrunRequest, time: Int) -> (fields: SrunFields, legacy: String) {
        guard let session = session(at: request.peer) else {
            return (["ecode": 0, "error": "not_online_error", "error_msg": "", "res": "not_online_error"], "not_online_error")
        }
        let devices = sessions(of: session.account)
        let detail = Dictionary(uniqueKeysWithValues: devices.map { device -> (String, SrunFields) in
            (String(device.id), [
                "ip": .text(device.ip), "ip6": "", "class_name": .text(device.deviceClass), "os_name": .text(device.os),
                "add_time": .integer(device.since), "user_mac": .text(device.mac),
            ])
        })
        var fields: SrunFields = [
            "ServerFlag": 0, "add_time": .integer(session.since), "billing_name": "ccsim", "bytes_in": 0, "bytes_out": 0,
            "checkout_date": 0, "domain": "", "ecode": 0, "error": "ok", "error_msg": "", "group_id": "1",
            "keepalive_time": .integer(time), "online_device_total": .text(String(devices.count)),
            "online_device_detail": .text(SrunReply.compactJSON(detail)), "online_ip": .text(session.ip), "online_ip6": "",
            "package_id": "0", "products_id": "1", "products_name": "ccsim", "real_name": "", "remain_bytes": 0,
            "remain_seconds": 0, "res": "ok", "sum_bytes": 0, "sum_seconds": .integer(max(0, time - session.since)),
            "sysver": .text(SrunReply.systemVersion), "user_balance": 0, "user_charge": 0, "user_mac": .text(session.mac),
            "user_name": .text(session.account), "wallet_balance": 0,
        ]
        fields.merge(reportedForAll) { $1 }
        fields.merge(reported[session.account] ?? [:]) { $1 }
        if reportedForAll["all_bytes"] == nil, reported[session.account]?["all_bytes"] == nil {
            fields["all_bytes"] = .integer(Self.integer(fields["bytes_in"]) + Self.integer(fields["bytes_out"]))
        }
        // [0] user name, [6] bytes, [7] seconds, [8] IP; the rest as nobody knows them.
        let legacy = [
            session.account, String(session.since), String(time), "0", "0", "0", fields["sum_bytes"]?.plain ?? "0",
            fields["sum_seconds"]?.plain ?? "0", session.ip, "", session.mac, "0",
        ].joined(separator: ",")
        return (fields, legacy)
    }

    private static func integer(_ value: SrunValue?) -> Int {
        switch value {
        case .integer(let number): number
        case .number(let number): Int(number)
        case .text(let text): Int(text) ?? 0
        case nil: 0
        }
    }

    /// action=logout: no password; the session at the source address, if it is the username's.
    mutating func logout(_ request: SrunRequest) -> SrunFields {
        guard let username = request["username"], !username.isEmpty else {
            return SrunReply.failure("missing_required_parameters_error")
        }
        guard let session = session(at: request.peer), session.account == username, session.kind != .stale else {
            return SrunReply.loginError("You are not online.")
        }
        if session.ordinary { end { $0.id == session.id } }
        return ["ecode": 0, "error": "ok", "error_msg": "", "res": "ok", "suc_msg": "logout_ok"]
    }

    /// rad_user_dm: `sign` = SHA-1(time + username + ip + unbind + time); acts on the `ip` named.
    mutating func disconnect(_ request: SrunRequest) -> SrunFields {
        guard let time = request["time"], let username = request["username"], let sign = request["sign"],
            !time.isEmpty, !username.isEmpty, !sign.isEmpty
        else { return SrunReply.failure("missing_required_parameters_error") }
        let ip = request["ip"] ?? ""
        let unbind = request["unbind"] ?? ""
        guard sign == SrunDigest.sha1Hex(Array((time + username + ip + unbind + time).utf8)) else {
            return SrunReply.failure("sign_error")
        }
        let address = ip.isEmpty ? request.peer : ip
        guard let session = session(at: address), session.kind != .stale,
            session.account == username || session.account.split(separator: "@").first.map(String.init) == username
        else {
            return ["ecode": 0, "error": "not_online_error", "error_msg": "", "online_ip": .text(address), "res": "not_online_error"]
        }
        if session.ordinary { end { $0.id == session.id } }
        return ["ecode": 0, "error": "logout_ok", "error_msg": "", "online_ip": .text(address), "res": "logout_ok"]
    }
}
