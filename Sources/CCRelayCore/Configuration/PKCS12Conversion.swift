/// The way out for a PKCS#12 bundle whose password no keyring keeps (a
/// desktop without a Secret Service): PEM files made of it, which need no
/// password. Setup and the daemon's refusal give the same commands.
public enum PKCS12Conversion {
    /// The bundle at `path` without its `.p12`/`.pfx` ending: where the PEM files go (`STEM.pem`, `STEM.key`).
    private static func stem(_ path: String) -> String {
        let lowered = path.lowercased()
        return lowered.hasSuffix(".p12") || lowered.hasSuffix(".pfx") ? String(path.dropLast(4)) : path
    }

    /// The commands that make the PEM pair of the bundle at `path`, then set ccrelay up with it.
    public static func commands(_ path: String) -> [String] {
        let stem = stem(path)
        return [
            "openssl pkcs12 -in \(path) -clcerts -nokeys -out \(stem).pem",
            "openssl pkcs12 -in \(path) -nocerts -nodes -out \(stem).key && chmod 600 \(stem).key",
            "ccrelay setup --force --certificate \(stem).pem --key \(stem).key",
        ]
    }
}
