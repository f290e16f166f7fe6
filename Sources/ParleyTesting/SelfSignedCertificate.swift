import Foundation
import ParleyNet

/// A self-signed certificate for `localhost` / `127.0.0.1`, made with the openssl CLI in a
/// temporary folder.
public struct SelfSignedCertificate: Sendable {
    /// The folder holding `cert.pem` and `key.pem`.
    public let folder: URL
    /// The certificate, PEM.
    public var certificatePath: String { folder.appendingPathComponent("cert.pem").path }
    /// The private key, PEM.
    public var privateKeyPath: String { folder.appendingPathComponent("key.pem").path }
    /// A server configuration presenting this certificate.
    public var tls: TLSConfiguration { TLSConfiguration(certificatePath: certificatePath, privateKeyPath: privateKeyPath) }

    /// Makes a new certificate and key.
    public static func make() async throws -> SelfSignedCertificate {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("parley-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let certificate = SelfSignedCertificate(folder: folder)
        let process = Subprocess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", certificate.privateKeyPath, "-out", certificate.certificatePath, "-days", "1",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let status = await process.exitStatus()
        guard status == 0 else { throw SelfSignedCertificateError(status: status) }
        return certificate
    }

    /// Deletes the folder.
    public func remove() {
        try? FileManager.default.removeItem(at: folder)
    }
}

/// The openssl CLI failed to make a certificate.
public struct SelfSignedCertificateError: Error, CustomStringConvertible {
    /// openssl's exit status.
    public let status: Int32
    public var description: String { "openssl exited with \(status)" }
}
