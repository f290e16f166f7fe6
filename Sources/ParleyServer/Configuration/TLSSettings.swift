import Foundation
import ParleyNet

/// HTTPS and WSS without a proxy: the certificate and key `parley serve` presents
/// (`PARLEY_TLS_CERT` and `PARLEY_TLS_KEY`, or `--tls-cert` and `--tls-key`).
public enum TLSSettings {
    /// The TLS configuration these PEM files make, or `nil` when neither is given.
    /// - Parameter problems: gets one line per problem: only one of the two given, or a file
    ///   that cannot be read.
    public static func configuration(certificate: String?, privateKey: String?, problems: inout [String]) -> TLSConfiguration? {
        switch (certificate, privateKey) {
        case (nil, nil):
            return nil
        case (nil, _?):
            problems.append("PARLEY_TLS_CERT (--tls-cert): a certificate is required with the TLS key")
            return nil
        case (_?, nil):
            problems.append("PARLEY_TLS_KEY (--tls-key): a private key is required with the TLS certificate")
            return nil
        case let (certificate?, privateKey?):
            let unreadable = [("PARLEY_TLS_CERT (--tls-cert)", certificate), ("PARLEY_TLS_KEY (--tls-key)", privateKey)]
                .filter { !FileManager.default.isReadableFile(atPath: $0.1) }
            for (setting, path) in unreadable { problems.append("\(setting): cannot read \(path)") }
            return unreadable.isEmpty ? TLSConfiguration(certificatePath: certificate, privateKeyPath: privateKey) : nil
        }
    }
}
