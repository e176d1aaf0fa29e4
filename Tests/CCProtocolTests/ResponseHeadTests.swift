import CurlTransport
import Testing

/// What `ResponseBuffer` reads from a head, line by line as libcurl hands
/// it over (bytes, no text made of the lines it does not keep).
@Suite struct ResponseHeadTests {
    func read(_ lines: [String]) -> ResponseBuffer {
        let buffer = ResponseBuffer(limit: 1024)
        for line in lines { Array(line.utf8).withUnsafeBufferPointer { buffer.takeHeaderLine($0) } }
        return buffer
    }

    @Test func theFinalHeadsStatusAndHeadersAreRead() {
        let head = read([
            "HTTP/1.1 100 Continue\r\n", "Retry-After: 9\r\n", "\r\n",
            "HTTP/1.1 429 Too Many Requests\r\n", "content-LENGTH: 1x2\r\n", "RETRY-AFTER:\t 30 \r\n", "X-Other: 1\r\n",
        ])
        #expect(head.status == 429 && !head.headComplete, "an interim head is not the answer; the blank line has not come")
        #expect(head.contentLength == 12 && head.retryAfter == "30 ")
        Array("\r\n".utf8).withUnsafeBufferPointer { head.takeHeaderLine($0) }
        #expect(head.headComplete)
        let interim = read(["HTTP/1.1 100 Continue\r\n", "\r\n"])
        #expect(interim.status == 100 && !interim.headComplete && interim.retryAfter == nil)
    }

    @Test func oddStatusLinesAndHeadersAreBounded() {
        #expect(read(["HTTP/2 204\r\n"]).status == 204)
        #expect(read(["HTTP/1.1  503  Busy\r\n"]).status == 503)
        #expect(read(["HTTP/1.1 2000 OK\r\n"]).status == 200)
        #expect(read(["HTTP/1.1 OK\r\n"]).status == 0 && read(["HTTP/1.1\r\n"]).status == 0)
        #expect(read(["Content-Length: 99999999999999999999\r\n"]).contentLength == 999_999_999_999)
        #expect(read(["Retry-After: " + String(repeating: "长", count: 100) + "\r\n"]).retryAfter?.count == 64)
        #expect(read(["Retry-After\r\n", "Content-Lengt: 5\r\n"]).retryAfter == nil)
    }

    @Test func aMailServersRepliesAreKeptNewestFour() {
        let head = read(["220 mail ready\r\n", "250-first\r\n", "250 OK\r\n", "354 go on\r\n", "550 5.7.1 " + String(repeating: "x", count: 400) + "\r\n"])
        #expect(head.replies.count == 4 && head.replies.first == "250-first")
        #expect(head.replies.last?.hasPrefix("550 5.7.1 x") == true && head.replies.last?.count == 300)
        #expect(head.status == 0, "an SMTP reply is no HTTP status")
    }
}
