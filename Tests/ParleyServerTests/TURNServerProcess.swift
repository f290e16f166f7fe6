import Foundation
import ParleyServer

/// coturn's `turnserver` (Debian) on a free loopback UDP port with one long-term user, for calls
/// that must go through a TURN relay; `stop()` ends it.
struct TURNServerProcess {
    static let executable = "/usr/bin/turnserver"
    let port: Int
    let iceServer: ICEServer
    private let process: Process

    static var available: Bool { FileManager.default.isExecutableFile(atPath: executable) }

    static func start() throws -> TURNServerProcess {
        let port = try freeUDPPort()
        let password = UUID().uuidString
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [
            "-n", "--listening-ip=127.0.0.1", "--relay-ip=127.0.0.1", "--listening-port=\(port)",
            "--lt-cred-mech", "--user=parley:\(password)", "--realm=parley.test",
            // The test's peers are on loopback, which coturn refuses to relay to unless told.
            "--allow-loopback-peers", "--no-tls", "--no-dtls", "--no-cli", "--log-file=stdout", "--simple-log",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return TURNServerProcess(
            port: port, iceServer: ICEServer(urls: ["turn:127.0.0.1:\(port)?transport=udp"], username: "parley", credential: password),
            process: process
        )
    }

    /// Kills the server (coturn lingers on SIGTERM).
    func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// A UDP port nobody holds now (bound, read back, released).
    private static func freeUDPPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw CocoaError(.fileWriteUnknown) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
