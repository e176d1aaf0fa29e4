import CoreVocabulary
import CurlTransport
import CCProtocol
import DesktopServices
import FileAccess
import CCRelayCore
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's whole check of a configuration: the file (syntax, values,
/// permissions), then what the CC/1 client needs from it (URL rules,
/// certificate and key, CA file, interface). `ccrelay config check` runs
/// this same code (it execs `ccrelay-daemon --check`), so it says "ok"
/// exactly when the daemon would start.
public enum ConfigurationCheck {
    /// The file at `path`, checked completely: the configuration when it is
    /// usable, and every problem as FILE:LINE. A PKCS#12 certificate's
    /// password is `bundlePassword` when given (setup's trial), else the keyring's.
    public static func load(_ path: String, bundlePassword: String? = nil, log: (String) -> Void = { _ in }) -> ConfigurationParser.Result {
        let localize = Localization.localizer
        var result = ConfigurationFile.load(path)
        guard var configuration = result.configuration else { return result }
        // Secrets the steering group can read (ccrelay 0.2's system service): a warning with the fix.
        for (file, what, key) in [(path, localize("the configuration %s"), nil), (configuration.key, localize("the private key %s"), "auth.key"),
                                  (configuration.passwordFile, localize("the password file %s"), "auth.password-file")] {
            guard let file, let warning = SecretFileMode.groupReadable(file, called: TextTemplate.fill(what, file), localize: localize)
            else { continue }
            result.warnings.append(ConfigurationIssue(file: path, line: key.flatMap { configuration.lines[$0] } ?? 0, message: warning, key: key))
        }
        if let certificate = configuration.certificate, Configuration.isPKCS12Bundle(certificate) {
            configuration.bundlePassword = bundlePassword ?? BundlePassword.lookUp(certificate, log: log)
            result.configuration = configuration
        }
        do throws(ClientConfigurationError) {
            switch configuration.serverProtocol {
            case .cc1: try CCClient.check(serverConfiguration(configuration), localize: localize)
            case .srun: _ = try SrunCampusClient.checked(configuration, localize: localize)
            }
            if let passwordFile = configuration.passwordFile, case .failure(let problem) = SecretFile.read(passwordFile) {
                throw ClientConfigurationError(problem.description, key: "auth.password-file")
            }
            if let caFile = configuration.forwardCAFile {
                do throws(ClientConfigurationError) {
                    try CredentialFiles.checkCertificateAuthorities(caFile, localize: localize)
                } catch {
                    throw ClientConfigurationError("[relay] " + error.message, key: "relay.ca-file")
                }
            }
        } catch {
            var error = error
            // Setup's trial: the password was given to setup, not read from the keyring.
            if bundlePassword != nil, let certificate = configuration.certificate,
                error == CredentialFiles.keyringPasswordRefused(certificate, localize: localize)
            {
                error.message = TextTemplate.fill(
                    localize("the password given to setup is wrong for %s (the bundle does not open with it); run setup again with its right password (empty if it has none)"),
                    [certificate])
            }
            let line = error.key.flatMap { configuration.lines[$0] } ?? 0
            result.errors.append(ConfigurationIssue(file: path, line: line, message: error.message, key: error.key))
            result.configuration = nil
        }
        return result
    }

    /// The file at `path` as the daemon reads it: checked completely, with
    /// whether it is there at all and the certificate files it names (when
    /// it reads that far); and the warnings.
    public static func read(_ path: String, log: (String) -> Void = { _ in }) -> (reading: ConfigurationReading, warnings: [ConfigurationIssue]) {
        let loaded = load(path, log: log)
        let named = loaded.configuration ?? ConfigurationFile.load(path).configuration
        let files = named.map { [$0.certificate, $0.key, $0.caFile].compactMap { $0 } } ?? []
        let reading = ConfigurationReading(
            usable: loaded.configuration, problems: loaded.errors, exists: access(path, F_OK) == 0, credentialFiles: files)
        return (reading, loaded.warnings)
    }

    /// What the CC/1 client takes from the configuration.
    public static func serverConfiguration(_ configuration: Configuration) -> ServerConfiguration {
        ServerConfiguration(
            url: configuration.serverURL, caFile: configuration.caFile, pinnedKey: configuration.pinnedKey,
            interface: configuration.interface, certificate: configuration.certificate, key: configuration.key,
            keyPassphrase: configuration.bundlePassword)
    }
}
