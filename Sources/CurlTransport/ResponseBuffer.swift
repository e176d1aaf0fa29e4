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

    /// One header line (status line, header, or the blank line that ends the
    /// head), as libcurl hands it over: read as bytes, and only the values
    /// kept become text.
    public func takeHeaderLine(_ line: UnsafeBufferPointer<UInt8>) {
        let space = UInt8(ascii: " ")
        if line.starts(with: "HTTP/".utf8) {
            // "HTTP/1.1 200 OK": the word after the version, its first three characters.
            let afterVersion = line.drop { $0 != space }.drop { $0 == space }
            status = Int(String(decoding: afterVersion.prefix { $0 != space }.prefix(3), as: UTF8.self)) ?? 0
            headComplete = false
            retryAfter = nil
            contentLength = nil
        } else if line.count >= 3, (0x32...0x35).contains(line[0]), line.prefix(3).allSatisfy({ (0x30...0x39).contains($0) }) {
            // An SMTP reply: a three-digit code first (2xx to 5xx).
            let text = String(decoding: line.prefix { $0 != 0x0D && $0 != 0x0A }, as: UTF8.self)
            replies = Array((replies + [String(String.UnicodeScalarView(text.unicodeScalars.prefix(300)))]).suffix(4))
        } else if line.elementsEqual("\r\n".utf8) || line.elementsEqual("\n".utf8) {
            if status >= 200 { headComplete = true }
        } else if Self.line(line, isNamed: "content-length:") {
            let digits = line.dropFirst(15).filter { (0x30...0x39).contains($0) }.prefix(12)
            contentLength = Int(String(decoding: digits, as: UTF8.self))
        } else if Self.line(line, isNamed: "retry-after:") {
            let value = line.dropFirst(12).drop { $0 == space || $0 == 0x09 }.prefix { $0 != 0x0D && $0 != 0x0A }
            retryAfter = String(String(decoding: value, as: UTF8.self).prefix(64))
        }
    }

    /// Whether `line` starts with the header name `name` (lowercase, with its colon), in any case.
    private static func line(_ line: UnsafeBufferPointer<UInt8>, isNamed name: StaticString) -> Bool {
        let name = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        guard line.count >= name.count else { return false }
        for (byte, wanted) in zip(line, name) where (0x41...0x5A).contains(byte) ? byte | 0x20 != wanted : byte != wanted {
            return false
        }
        return true
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
    data.withMemoryRebound(to: UInt8.self, capacity: total) { buffer.takeHeaderLine(UnsafeBufferPointer(start: $0, count: total)) }
    return total
}
