import FoundationEssentials
import RelayCore
#if canImport(Glibc)
import Glibc
#endif

/// Finds, checks and reads `ccrelay.conf`.
public enum ConfigurationFile {
    /// `$XDG_CONFIG_HOME/ccrelay/ccrelay.conf`, or `~/.config/ccrelay/ccrelay.conf`.
    public static func defaultPath() -> String {
        if let base = environment("XDG_CONFIG_HOME"), base.hasPrefix("/") { return base + "/ccrelay/ccrelay.conf" }
        return home() + "/.config/ccrelay/ccrelay.conf"
    }

    static func home() -> String { environment("HOME") ?? "/" }

    private static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// Reads and parses `path`. A missing or unreadable file, or one that
    /// group or others may read, is an error (it names the file and the fix).
    public static func load(_ path: String) -> ConfigurationParser.Result {
        func failure(_ message: String) -> ConfigurationParser.Result {
            .init(configuration: nil, errors: [.init(file: path, line: 0, message: message)], warnings: [])
        }
        var info = stat()
        guard stat(path, &info) == 0 else {
            return failure("cannot read the configuration: \(String(cString: strerror(errno))); create it (see README, Configuration)")
        }
        if info.st_mode & 0o077 != 0 {
            return failure("the configuration may be read by other users (mode \(String(info.st_mode & 0o777, radix: 8))); fix it with: chmod 600 \(path)")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            return failure("cannot read the configuration: \(String(cString: strerror(errno)))")
        }
        guard data.count <= 1 << 20 else { return failure("the configuration is larger than 1 MiB") }
        guard let text = String(validatingUTF8: data) else { return failure("the configuration is not UTF-8 text") }
        return ConfigurationParser.parse(text, file: path, home: home())
    }
}

extension String {
    init?(validatingUTF8 data: Data) {
        let bytes = [UInt8](data)
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        self = text
    }
}
