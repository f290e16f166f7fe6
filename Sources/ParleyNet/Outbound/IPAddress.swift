import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 address: the 4 or 16 bytes that go on the wire, in network order.
///
/// ```swift
/// let metadata = IPAddress("169.254.169.254")!
/// print(metadata.isIPv4, metadata)  // true 169.254.169.254
/// ```
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address's bytes: 4 for IPv4, 16 for IPv6.
    public let bytes: [UInt8]

    /// Reads a numeric address (`192.0.2.1`, `2001:db8::1`, `[::1]`); `nil` for anything else,
    /// host names included.
    public init?(_ text: String) {
        let bare = text.hasPrefix("[") && text.hasSuffix("]") ? String(text.dropFirst().dropLast()) : text
        var v4 = in_addr()
        if inet_pton(AF_INET, bare, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, bare, &v6) == 1 else { return nil }
        bytes = withUnsafeBytes(of: &v6) { Array($0) }
    }

    /// An address from its 4 or 16 bytes.
    init(bytes: [UInt8]) {
        precondition(bytes.count == 4 || bytes.count == 16, "an IP address has 4 or 16 bytes")
        self.bytes = bytes
    }

    /// Whether this is an IPv4 address.
    public var isIPv4: Bool { bytes.count == 4 }

    /// The usual text form: dotted quad, or RFC 5952 IPv6 (`::ffff:127.0.0.1`).
    public var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        // Cannot fail: the family matches the byte count and the buffer fits every address.
        _ = bytes.withUnsafeBytes { raw in
            inet_ntop(isIPv4 ? AF_INET : AF_INET6, raw.baseAddress, &text, socklen_t(text.count))
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
