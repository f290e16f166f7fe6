import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A loopback TCP port that refuses connections: bound but not listening, and held for as long
/// as this value lives, so no other test's server can be given it meanwhile (a port whose server
/// was just shut down can be handed to the next server that binds port 0).
public final class ClosedPort: Sendable {
    /// The port number.
    public let port: Int
    private let descriptor: Int32

    /// Reserves a port on 127.0.0.1.
    /// - Throws: `POSIXError` when no socket can be bound.
    public init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(descriptor, address, length) == 0 && getsockname(descriptor, address, &length) == 0
            }
        }
        guard bound else {
            let code = POSIXErrorCode(rawValue: errno) ?? .EIO
            close(descriptor)
            throw POSIXError(code)
        }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(descriptor) }
}
