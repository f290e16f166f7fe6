import Foundation

/// Which addresses a request a client caused (rather than the operator) may connect to: public
/// ones, and those in the operator's allow-list. Loopback, private, link-local, unique-local,
/// shared (CGNAT), multicast, reserved and cloud metadata addresses are refused, and so are
/// IPv6 addresses carrying one of them (IPv4-mapped `::ffff:10.0.0.1`, NAT64 `64:ff9b::a00:1`).
///
/// `HTTPClient` applies a request's policy itself (see `HTTPClient.Request.outboundPolicy`).
///
/// ```swift
/// let policy = OutboundPolicy(allowing: [try IPAddressRange("10.1.0.0/16")])
/// policy.refusal(of: IPAddress("169.254.169.254")!)  // "a cloud metadata address"
/// policy.refusal(of: IPAddress("10.1.2.3")!)         // nil: allowed
/// ```
public struct OutboundPolicy: Sendable, Hashable {
    /// Blocks the operator allows although they are not public.
    public var allowed: [IPAddressRange]

    /// Creates a policy refusing every non-public address outside `allowed`.
    public init(allowing allowed: [IPAddressRange] = []) {
        self.allowed = allowed
    }

    /// What kind of non-public address `address` is (for example "a loopback address"), or
    /// `nil` when requests may connect to it: it is public, or in `allowed`.
    public func refusal(of address: IPAddress) -> String? {
        let carried = Self.carriedIPv4(in: address)
        if allowed.contains(where: { $0.contains(address) || carried.map($0.contains) == true }) { return nil }
        let checked = carried ?? address
        return Self.blocked.first { $0.range.contains(checked) }?.kind
    }

    /// The non-public blocks, each with the words an error uses for it; the first match names an
    /// address, so narrower blocks come before the blocks holding them.
    static let blocked: [(range: IPAddressRange, kind: String)] = [
        (IPAddressRange("0.0.0.0", 8), "an unspecified address"),
        (IPAddressRange("10.0.0.0", 8), "a private address"),
        (IPAddressRange("100.64.0.0", 10), "a shared (carrier-grade NAT) address"),
        (IPAddressRange("127.0.0.0", 8), "a loopback address"),
        (IPAddressRange("169.254.169.254", 32), "a cloud metadata address"),
        (IPAddressRange("169.254.0.0", 16), "a link-local address"),
        (IPAddressRange("172.16.0.0", 12), "a private address"),
        (IPAddressRange("192.168.0.0", 16), "a private address"),
        (IPAddressRange("224.0.0.0", 4), "a multicast address"),
        (IPAddressRange("240.0.0.0", 4), "a reserved or broadcast address"),
        (IPAddressRange("::", 128), "an unspecified address"),
        (IPAddressRange("::1", 128), "a loopback address"),
        (IPAddressRange("::", 96), "an IPv4-compatible address"),
        (IPAddressRange("fd00:ec2::254", 128), "a cloud metadata address"),
        (IPAddressRange("fc00::", 7), "a unique-local address"),
        (IPAddressRange("fe80::", 10), "a link-local address"),
        (IPAddressRange("fec0::", 10), "a site-local address"),
        (IPAddressRange("ff00::", 8), "a multicast address"),
    ]

    /// IPv6 blocks whose last 32 bits are an IPv4 address the packets reach.
    private static let carryingIPv4 = [
        IPAddressRange("::ffff:0:0", 96),  // IPv4-mapped
        IPAddressRange("64:ff9b::", 96),  // NAT64 (RFC 6052)
    ]

    /// The IPv4 address an IPv6 `address` stands for, if it is IPv4-mapped or NAT64.
    private static func carriedIPv4(in address: IPAddress) -> IPAddress? {
        guard !address.isIPv4, carryingIPv4.contains(where: { $0.contains(address) }) else { return nil }
        return IPAddress(bytes: Array(address.bytes.suffix(4)))
    }
}
