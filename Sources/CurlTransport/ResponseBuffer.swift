/// Collects a reply: its body up to a limit, and from its head the status
/// and the headers ccrelay reads (through libcurl's header function, which
/// every libcurl since 7.10 has).
public final class ResponseBuffer {
    public let limit: Int
    public var bytes: [UInt8] = []
    /// The body went past `limit`: the transfer was stopped there.
    public var overflowed = false
    /// The status of the final head (after any 1xx interim one); 0 before a status line came.
    public var status = 0
    /// Every header of the final head has come: the status is the answer,
    /// whatever becomes of the body.
    public var headComplete = false
    /// `Retry-After`, as sent (at most 64 characters).
    public var retryAfter: String?
    /// The answer's `Content-Length`, when it gave one (a 204 that claims a body is no 204).
    public var contentLength: Int?
    /// The head's size so far, across every interim head.
    public var headBytes = 0
    /// A mail server's newest reply lines (`250 OK`, `550 5.7.1 rejected`),
    /// which libcurl hands to the header function too: at most 4, each cut to 300 characters.
    public private(set) var replies: [String] = []
    /// The most a head may take before the transfer is stopped.
    public static let headLimit = 64 << 10

    public init(limit: Int) {
        self.limit = limit
    }

    /// One header line (status line, header, or the blank line that ends the head).
    public func takeHeaderLine(_ line: String) {
        if line.hasPrefix("HTTP/") {
            let words = line.split(separator: " ")
            status = words.count > 1 ? Int(words[1].prefix(3)) ?? 0 : 0
            headComplete = false
            retryAfter = nil
            contentLength = nil
        } else if let first = line.utf8.first, (0x32...0x35).contains(first), line.utf8.prefix(3).allSatisfy({ (0x30...0x39).contains($0) }) {
            // An SMTP reply: a three-digit code first (2xx to 5xx).
            let text = String(String.UnicodeScalarView(line.unicodeScalars.prefix { $0 != "\r" && $0 != "\n" }.prefix(300)))
            replies = Array((replies + [text]).suffix(4))
        } else if line == "\r\n" || line == "\n" {
            if status >= 200 { headComplete = true }
        } else {
            // The two headers read, by name (one lowercased copy of a line's start, not one per name).
            let name = line.prefix(15).lowercased()
            if name == "content-length:" {
                let digits = line.unicodeScalars.dropFirst(15).filter { ("0"..."9").contains($0) }.prefix(12)
                contentLength = Int(String(String.UnicodeScalarView(digits)))
            } else if name.hasPrefix("retry-after:") {
                let value = line.unicodeScalars.dropFirst(12).drop { $0 == " " || $0 == "\t" }.prefix { $0 != "\r" && $0 != "\n" }
                retryAfter = String(String(String.UnicodeScalarView(value)).prefix(64))
            }
        }
    }
}

/// libcurl's write function: appends to the `ResponseBuffer` in the write
/// data; once the reply exceeds its limit, stops the transfer (returns 0):
/// nothing past the limit is ever read.
public let appendToResponseBuffer: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
    data, size, count, context in
    guard let data, let context else { return 0 }
    let buffer = Unmanaged<ResponseBuffer>.fromOpaque(context).takeUnretainedValue()
    let total = size * count
    guard buffer.bytes.count + total <= buffer.limit else {
        buffer.overflowed = true
        return 0
    }
    data.withMemoryRebound(to: UInt8.self, capacity: total) { buffer.bytes.append(contentsOf: UnsafeBufferPointer(start: $0, count: total)) }
    return total
}

/// libcurl's header function: hands each header line to the
/// `ResponseBuffer` in the header data; a head over 64 KiB stops the transfer.
public let takeResponseHeader: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
    data, size, count, context in
    guard let data, let context else { return 0 }
    let buffer = Unmanaged<ResponseBuffer>.fromOpaque(context).takeUnretainedValue()
    let total = size * count
    buffer.headBytes += total
    guard buffer.headBytes <= ResponseBuffer.headLimit else { return 0 }
    let line = data.withMemoryRebound(to: UInt8.self, capacity: total) { String(decoding: UnsafeBufferPointer(start: $0, count: total), as: UTF8.self) }
    buffer.takeHeaderLine(line)
    return total
}
