// swift-tools-version:6.0
// SPDX-License-Identifier: Apache-2.0 (LICENSE)
import PackageDescription

/// ccrelay: keeps a Linux desktop logged in to the campus CC server and
/// reports trouble through desktop notifications. See README.md.
let package = Package(
    name: "ccrelay",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "ccrelay", targets: ["ccrelay"]),
        .executable(name: "ccrelay-daemon", targets: ["ccrelay-daemon"]),
        .executable(name: "ccsim", targets: ["ccsim"]),
    ],
    targets: [
        // System libraries from Debian's -dev packages (see scripts/bootstrap).
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(
            name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev", "libgnutls28-dev"])]),
        .systemLibrary(name: "CLinux"),

        // The daemon's one-thread epoll loop, and the scheduler protocol libraries are driven by.
        .target(name: "EventLoop", dependencies: ["CLinux"]),
        // The same scheduler on a dispatch queue, for the command line and tests (never the daemon).
        .target(name: "DispatchLoop", dependencies: ["EventLoop"]),
        .target(name: "DBus", dependencies: ["CDBus", "EventLoop"]),
        // Awaited forms of the completion-based APIs, for the CLI and tests; the
        // daemon depends on neither, so it has no Swift concurrency to reach for.
        .target(name: "DBusAsync", dependencies: ["DBus", "EventLoop"]),
        .target(name: "CCProtocolAsync", dependencies: ["CCProtocol", "CCRelayCore", "CoreVocabulary", "EventLoop"]),
        // Reading the small files a user names (configuration, certificates) safely.
        .target(name: "FileAccess", dependencies: ["CoreVocabulary", "EventLoop"]),
        .target(name: "CurlTransport", dependencies: ["CCurl", "CoreVocabulary", "EventLoop"]),
        .target(name: "CCProtocol", dependencies: ["CurlTransport", "CCurl", "COpenSSL", "CCRelayCore", "CoreVocabulary", "FileAccess", "EventLoop"]),
        // The words every layer shares: instants, alerts, the daemon's states, text helpers.
        .target(name: "CoreVocabulary"),
        // Forwarding alerts off the machine, pure: the services (one file each), their targets, requests and
        // answers, when each target takes what (ForwardingPolicy), and the lanes' rules (Forwarder).
        .target(name: "Forwarding", dependencies: ["CoreVocabulary"]),
        // The libcurl poster of forwarded alerts, and the HMAC their signing services ask for (libcrypto).
        .target(name: "ForwardingTransport", dependencies: ["Forwarding", "CoreVocabulary", "CurlTransport", "CCurl", "COpenSSL", "EventLoop"]),
        .target(name: "CCRelayCore", dependencies: ["CoreVocabulary", "Forwarding"]),
        // The Srun (深澜) portal's encodings (xencode, its base64, the digests), and its client.
        .target(name: "SrunCodec", dependencies: ["COpenSSL"]),
        .target(name: "SrunProtocol", dependencies: ["SrunCodec", "CurlTransport", "CCurl", "CCRelayCore", "CoreVocabulary", "EventLoop"]),
        // What the CLI and the daemon share; no libcurl, so that CLI commands start fast.
        .target(name: "AlertJournal", dependencies: ["CCRelayCore", "CoreVocabulary", "Forwarding", "CSQLite", "EventLoop"]),
        .target(name: "DesktopServices", dependencies: ["AlertJournal", "DBus", "EventLoop", "CCRelayCore", "CoreVocabulary", "Forwarding", "CLinux", "FileAccess"]),
        .target(name: "DaemonShell", dependencies: ["AlertJournal", "DesktopServices", "DBus", "CCRelayCore", "CoreVocabulary", "Forwarding", "ForwardingTransport", "CCProtocol", "SrunProtocol", "CurlTransport", "CLinux", "EventLoop", "FileAccess"]),
        .executableTarget(
            name: "ccrelay", dependencies: ["AlertJournal", "DesktopServices", "CCRelayCore", "CoreVocabulary", "Forwarding", "DBus", "DBusAsync", "DispatchLoop", "FileAccess"]),
        // `ccrelay daemon` execs this (same process): the daemon and libcurl live here.
        .executableTarget(
            name: "ccrelay-daemon", dependencies: ["DaemonShell", "DesktopServices", "EventLoop", "CCProtocol", "CurlTransport", "SrunProtocol", "CCRelayCore", "CoreVocabulary", "Forwarding", "ForwardingTransport", "CLinux"]),
        .executableTarget(name: "ccsim", dependencies: ["CMicroHTTPD", "CCRelayCore", "CoreVocabulary", "SrunCodec"]),
        .executableTarget(name: "keepalive-bench", dependencies: ["CCProtocol", "CCProtocolAsync", "EventLoop"], path: "bench/keepalive-bench"),

        .target(name: "TestSupport", dependencies: ["DBus", "DBusAsync", "DispatchLoop", "EventLoop"], path: "Tests/TestSupport"),
        .testTarget(name: "EventLoopTests", dependencies: ["EventLoop", "DispatchLoop"]),
        // The daemon shell's rules without a process (its bus face on a private bus).
        .testTarget(
            name: "DaemonShellTests",
            dependencies: ["DaemonShell", "CCProtocol", "CurlTransport", "CCRelayCore", "CoreVocabulary", "Forwarding", "AlertJournal", "DesktopServices", "DBus", "DBusAsync", "EventLoop", "FileAccess", "TestSupport"]),
        .testTarget(name: "SrunProtocolTests", dependencies: ["SrunProtocol", "SrunCodec", "CCRelayCore", "CoreVocabulary", "CurlTransport", "EventLoop", "TestSupport"]),
        .testTarget(name: "DBusTests", dependencies: ["DBus", "DBusAsync", "DispatchLoop", "TestSupport"]),
        .testTarget(name: "CCRelayCoreTests", dependencies: ["CCRelayCore", "CoreVocabulary", "Forwarding"]),
        .testTarget(name: "ForwardingTests", dependencies: ["Forwarding", "CoreVocabulary"]),
        .testTarget(
            name: "ForwardingTransportTests",
            dependencies: ["ForwardingTransport", "Forwarding", "CoreVocabulary", "CurlTransport", "EventLoop", "TestSupport"]),
        // ccsim --protocol srun over real HTTP, and the published bitsrun client against it.
        .testTarget(name: "SrunSimulatorTests", dependencies: ["SrunCodec", "CCRelayCore", "CoreVocabulary", "TestSupport"]),
        .testTarget(name: "CLITests", dependencies: ["ccrelay", "DesktopServices", "CCRelayCore", "CoreVocabulary", "Forwarding", "TestSupport"]),
        .testTarget(name: "CCProtocolTests", dependencies: ["CCProtocol", "CCProtocolAsync", "CurlTransport", "CCRelayCore", "CoreVocabulary", "TestSupport", "CCurl", "EventLoop"]),
        .testTarget(name: "DesktopServicesTests", dependencies: ["AlertJournal", "DesktopServices", "CCRelayCore", "CoreVocabulary", "Forwarding", "DBus", "DBusAsync", "DispatchLoop", "TestSupport"]),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "DBus", "DBusAsync", "DispatchLoop", "AlertJournal", "DesktopServices", "CCRelayCore", "CoreVocabulary", "Forwarding", "CCProtocol", "CCProtocolAsync", "TestSupport",
                "CCurl", "CSQLite", "EventLoop",
            ]),
    ],
    swiftLanguageModes: [.v6]
)

// libFuzzer targets (Tests/Fuzz), declared only for `make fuzz` (scripts/fuzz),
// which builds them with -sanitize=fuzzer: libFuzzer brings their main.
if Context.environment["CCRELAY_FUZZ"] != nil {
    let fuzzTargets: [(String, [Target.Dependency])] = [
        ("fuzz-reply", ["CCProtocol", "CCRelayCore", "CoreVocabulary", "CurlTransport"]),
        ("fuzz-config", ["CCRelayCore", "CoreVocabulary", "Forwarding"]),
        ("fuzz-session", ["CCRelayCore", "CoreVocabulary"]),
        ("fuzz-dbus-value", ["DBus", "CDBus"]),
        ("fuzz-restore", ["AlertJournal", "CCRelayCore", "CoreVocabulary", "Forwarding"]),
        ("fuzz-relay", ["Forwarding", "CoreVocabulary"]),
    ]
    package.targets.append(.target(name: "CFuzzerDriver", path: "Tests/Fuzz/CFuzzerDriver"))
    for (name, dependencies) in fuzzTargets {
        package.targets.append(
            .executableTarget(name: name, dependencies: dependencies + ["CFuzzerDriver"], path: "Tests/Fuzz/\(name)"))
    }
}
