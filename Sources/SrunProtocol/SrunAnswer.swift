import CCRelayCore
import CoreVocabulary

/// One answer of the portal's CGI, read: `callback(<json>)` with exactly the
/// callback sent and nothing after the `)`, or plain JSON. Only the
/// top-level members are kept, and each is read leniently by the accessors
/// below (a number may come as a string, a string as a number; a missing or
/// unknown field is no error). Every string is bounded and cleaned before
/// anyone sees it; every number is checked before any arithmetic.
struct SrunAnswer {
    /// The most of an answer that is read: the transfer stops there.
    static let sizeLimit = 64 << 10

    let members: [String: JSONScan.Scalar]

    /// Why an answer could not be read: said without quoting it.
    struct Problem: Error, Hashable {
        var text: String
    }

    static func read(_ body: [UInt8], callback: String?) -> Result<SrunAnswer, Problem> {
        guard body.count <= sizeLimit else { return .failure(Problem(text: "the answer is larger than 64 KiB")) }
        let json: ArraySlice<UInt8>
        if let callback, body.starts(with: Array(callback.utf8) + [UInt8(ascii: "(")]) {
            guard body.last == UInt8(ascii: ")") else { return .failure(Problem(text: "the answer does not end with the callback's ')'")) }
            json = body[(callback.utf8.count + 1)..<(body.count - 1)]
        } else if body.first(where: { !isSpace($0) }) == UInt8(ascii: "{") {
            json = body[...]
        } else if isCallbackCall(body) {
            return .failure(Problem(text: "the answer calls another callback than the one sent"))
        } else {
            return .failure(Problem(text: "the answer is neither JSONP nor JSON"))
        }
        guard let members = JSONScan.members(String(decoding: json, as: UTF8.self), whole: true) else {
            return .failure(Problem(text: "the answer's JSON is malformed"))
        }
        return .success(SrunAnswer(members: members))
    }

    /// `name(`: a JavaScript call, as an answer to another callback starts.
    private static func isCallbackCall(_ body: [UInt8]) -> Bool {
        let name = body.prefix { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x5F || byte == 0x24
        }
        return !name.isEmpty && name.count < body.count && body[name.count] == UInt8(ascii: "(")
    }

    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    /// A string member, or a number's text, cleaned and at most `limit` characters.
    func text(_ name: String, limit: Int = 128) -> String? {
        switch members[name] {
        case .string(let text): SrunText.clean(text, limit: limit)
        case .number(let text): SrunText.clean(text, limit: min(limit, 32))
        default: nil
        }
    }

    /// A whole number in 0…`maximum`, from a number or from a string holding
    /// one (`"1"`, `"5.00"`); a fraction is cut off; anything else is nil.
    func count(_ name: String, maximum: Int64 = 1 << 62) -> Int64? {
        guard let number = number(name), number >= 0, number <= Double(maximum) else { return nil }
        return min(Int64(number.rounded(.down)), maximum)
    }

    /// An amount of money (`0`, `"5.00"`, `-1.5`), finite and within ±10^12; else nil.
    func amount(_ name: String) -> Double? {
        guard let number = number(name), abs(number) <= 1e12 else { return nil }
        return number
    }

    private func number(_ name: String) -> Double? {
        let text: String
        switch members[name] {
        case .number(let digits): text = digits
        case .string(let digits): text = digits
        default: return nil
        }
        guard (1...32).contains(text.utf8.count), text.utf8.allSatisfy({ "+-.0123456789eE".utf8.contains($0) }),
            let number = Double(text), number.isFinite
        else { return nil }
        return number
    }

    /// `error`, else `res`: what the portal says happened (`ok`, `login_error` …).
    var error: String? { text("error") ?? text("res") }

    /// The portal's own words for a failure, for display: `error_msg`, else
    /// `ploy_msg`, else `error`, else `ecode`.
    var words: String {
        for name in ["error_msg", "ploy_msg", "error", "ecode"] {
            if let said = text(name, limit: 300), !said.isEmpty { return said }
        }
        return ""
    }

    /// The class of this answer as a failure.
    var refusal: SrunRefusal {
        SrunRefusal.classify(ecode: text("ecode"), error: text("error"), message: text("error_msg", limit: 300))
    }

    /// A member that must be an address literal, or nil.
    func address(_ name: String) -> String? { SrunText.address(text(name, limit: 64)) }
}
