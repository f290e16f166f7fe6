import Foundation

/// A block of addresses in CIDR notation: `10.0.0.0/8`, `fe80::/10`, or one address
/// (`127.0.0.1` is `127.0.0.1/32`).
///
/// ```swift
/// let range = try IPAddressRange("172.16.0.0/12")
/// range.contains(IPAddress("172.31.255.1")!)  // true
/// ```
public struct IPAddressRange: Sendable, Hashable, CustomStringConvertible {
    /// Why a text is not a CIDR block, as one sentence naming the text.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The explanation.
        public var description: String
    }

    /// The first address of the block.
    public let network: IPAddress
    /// How many leading bits every address of the block shares with `network`.
    public let prefixLength: Int

    /// Reads `address/length` or a bare address.
    /// - Throws: `ParseError` for a text that is no address, a length past the family's bits,
    ///   or an address with bits set past the length (`10.0.0.1/8`: did you mean `10.0.0.0/8`?).
    public init(_ text: String) throws(ParseError) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let parts = trimmed.split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let address = IPAddress(String(parts[0])) else {
            throw ParseError(description: "\"\(trimmed)\" is not an IP address or CIDR block (such as 10.0.0.0/8 or fd00::/8)")
        }
        let bits = address.bytes.count * 8
        let length: Int
        if parts.count == 2 {
            guard let parsed = Int(parts[1]), (0...bits).contains(parsed) else {
                throw ParseError(description: "\"\(trimmed)\": the prefix length must be a whole number from 0 to \(bits)")
            }
            length = parsed
        } else {
            length = bits
        }
        let network = Self.masked(address, to: length)
        guard network == address else {
            throw ParseError(description: "\"\(trimmed)\" has bits set past its /\(length) prefix; did you mean \(network)/\(length)?")
        }
        self.network = network
        prefixLength = length
    }

    /// The block of `length` leading bits of `address` (a literal in this module's own tables).
    init(_ address: String, _ length: Int) {
        self.network = Self.masked(IPAddress(address)!, to: length)
        prefixLength = length
    }

    /// Whether `address` is in the block; an address of the other family never is.
    public func contains(_ address: IPAddress) -> Bool {
        address.bytes.count == network.bytes.count && Self.masked(address, to: prefixLength) == network
    }

    /// `address/length`.
    public var description: String { "\(network)/\(prefixLength)" }

    /// `address` with every bit past the first `length` cleared.
    private static func masked(_ address: IPAddress, to length: Int) -> IPAddress {
        var bytes = address.bytes
        for index in bytes.indices {
            let kept = min(8, max(0, length - index * 8))
            bytes[index] &= kept == 8 ? 0xFF : ~(0xFF >> UInt8(kept))
        }
        return IPAddress(bytes: bytes)
    }
}
