#if canImport(Glibc)
import Glibc
#endif

/// A failed system call: which call, on what, and errno — the one way the
/// daemon reports a libc failure (no `strerror` formatting anywhere else).
public struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The call, with what it acted on: `rename /home/s/.local/state/ccrelay/alerts.db`.
    public var call: String
    public var errno: Int32

    public init(_ call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    /// errno's text, as `strerror` says it.
    public var reason: String { Self.reason(errno) }

    /// The text of an errno value (for calls whose failures are reported in words of their own).
    public static func reason(_ errno: Int32) -> String { String(cString: strerror(errno)) }
    public var description: String { "\(call): \(reason)" }
}

/// The funnel for system calls that answer -1 and set errno (the
/// swift-system `valueOrErrno` pattern): the result, or a `SystemError`
/// naming `call`. Retries on EINTR, so no caller loops for it.
@discardableResult
public func systemCall<T: FixedWidthInteger>(_ call: @autoclosure () -> String, _ body: () -> T) throws(SystemError) -> T {
    while true {
        let result = body()
        if result != -1 { return result }
        let code = Glibc.errno
        if code != EINTR { throw SystemError(call(), errno: code) }
    }
}
