import Foundation

/// The server secret kept in the data directory when none is configured: generated once,
/// readable only by its owner.
public enum ServerSecretFile {
    /// The file name inside the data directory.
    public static let fileName = "server-secret"

    /// Reads the secret in `directory`, creating one if there is none.
    /// - Returns: the secret and whether it was just created.
    /// - Throws: when the file cannot be read or written.
    public static func loadOrCreate(in directory: URL) throws -> (secret: String, created: Bool) {
        let url = directory.appendingPathComponent(fileName)
        if let existing = try? String(contentsOf: url, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines), existing.count >= 16 {
            return (existing, false)
        }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let secret = "psk_" + Base64URL.encode(HMACSHA256.randomBytes(32))
        guard FileManager.default.createFile(atPath: url.path, contents: Data((secret + "\n").utf8), attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
        }
        return (secret, true)
    }
}
