/// What libcurl uploads (a mail's text for SMTP), read out by `readFromUploadBuffer`.
///
/// Confinement: used only on the loop that runs its transfer.
public final class UploadBuffer {
    public let bytes: [UInt8]
    var offset = 0

    public init(_ bytes: [UInt8]) { self.bytes = bytes }
}

/// libcurl's read function over an `UploadBuffer` (its `CURLOPT_READDATA`):
/// as much as fits, then 0 at the end.
public let readFromUploadBuffer: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
    destination, size, count, context in
    guard let destination, let context else { return 0 }
    let buffer = Unmanaged<UploadBuffer>.fromOpaque(context).takeUnretainedValue()
    let length = min(size * count, buffer.bytes.count - buffer.offset)
    guard length > 0 else { return 0 }
    buffer.bytes.withUnsafeBufferPointer { source in
        destination.withMemoryRebound(to: UInt8.self, capacity: length) {
            $0.update(from: source.baseAddress! + buffer.offset, count: length)
        }
    }
    buffer.offset += length
    return length
}
