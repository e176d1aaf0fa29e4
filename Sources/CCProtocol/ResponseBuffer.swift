/// Collects a reply body up to a limit.
final class ResponseBuffer {
    let limit: Int
    /// Past the limit: keep reading and drop the rest (a relay's answer is
    /// only shown), instead of failing the transfer (a CC/1 reply must be whole).
    let truncates: Bool
    var bytes: [UInt8] = []
    var overflowed = false
    init(limit: Int, truncates: Bool = false) {
        self.limit = limit
        self.truncates = truncates
    }
}

/// libcurl's write function: appends to the `ResponseBuffer` in the write
/// data; once the reply exceeds its limit, stops the transfer (returns 0)
/// or, for a truncating buffer, drops the rest.
let appendToResponseBuffer: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
    data, size, count, context in
    guard let data, let context else { return 0 }
    let buffer = Unmanaged<ResponseBuffer>.fromOpaque(context).takeUnretainedValue()
    let total = size * count
    guard buffer.bytes.count + total <= buffer.limit else {
        buffer.overflowed = true
        return buffer.truncates ? total : 0
    }
    data.withMemoryRebound(to: UInt8.self, capacity: total) { buffer.bytes.append(contentsOf: UnsafeBufferPointer(start: $0, count: total)) }
    return total
}
