import Foundation
import ParleyTesting
import ParleyNet

/// A self-signed certificate for `localhost` / `127.0.0.1`, made with the openssl CLI in a
/// temporary folder.
struct SelfSignedCertificate {
    let folder: URL
    var certificatePath: String { folder.appendingPathComponent("cert.pem").path }
    var privateKeyPath: String { folder.appendingPathComponent("key.pem").path }
    var tls: TLSConfiguration { TLSConfiguration(certificatePath: certificatePath, privateKeyPath: privateKeyPath) }

    static func make() async throws -> SelfSignedCertificate {
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
        guard status == 0 else { throw RawSocketError.failed("openssl exited with \(status)") }
        return certificate
    }

    func remove() {
        try? FileManager.default.removeItem(at: folder)
    }
}
