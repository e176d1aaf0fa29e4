import CCRelayCore

// libFuzzer target: the configuration parser. Any bytes (as the file's
// text) give a configuration or errors with a line inside the file, never a trap.

/// The one-input entry libFuzzer\'s own main looks for; the target\'s main.swift runs the loop with it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfig(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let result = ConfigurationParser.parse(text, file: "fuzz.conf", home: "/home/fuzz", localize: .english)
    let lines = text.unicodeScalars.filter { $0 == "\n" }.count + 1
    for issue in result.errors + result.warnings {
        precondition(issue.line >= 0 && issue.line <= lines, "line \(issue.line) of \(lines)")
    }
    precondition((result.configuration == nil) == !result.errors.isEmpty)
    if let configuration = result.configuration {
        precondition(!configuration.serverURL.isEmpty)
        precondition((1...3600).contains(configuration.warnBefore))
        precondition(!configuration.serverURL.unicodeScalars.contains { $0.value < 0x20 })
    }
    return 0
}
