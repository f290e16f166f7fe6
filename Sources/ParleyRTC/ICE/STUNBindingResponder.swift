import COpenSSL
import Foundation

/// The ICE-lite side of a connectivity check: reads a STUN Binding request (RFC 5389/8445),
/// checks its MESSAGE-INTEGRITY with the call's ICE password (HMAC-SHA1 from OpenSSL) and
/// writes the success response with XOR-MAPPED-ADDRESS, MESSAGE-INTEGRITY and FINGERPRINT.
public enum STUNBindingResponder {
    /// A Binding request that passed its integrity check.
    public struct Request: Sendable, Equatable {
        /// The transaction id (12 bytes).
        public var transactionID: [UInt8]
        /// The USERNAME attribute: `<our ufrag>:<their ufrag>`.
        public var username: String
        /// Whether the controlling peer nominated this pair (USE-CANDIDATE).
        public var useCandidate: Bool
    }

    static let magicCookie: UInt32 = 0x2112_A442
    static let bindingRequest: UInt16 = 0x0001
    static let bindingSuccess: UInt16 = 0x0101

    /// Whether a datagram is a STUN message (RFC 7983 demultiplexing: first byte 0–3 and the magic cookie).
    public static func isSTUN(_ packet: UnsafeRawBufferPointer) -> Bool {
        packet.count >= 20 && packet[0] < 4 && readUInt32(packet, 4) == magicCookie
    }

    /// The USERNAME of a Binding request, before its integrity is checked (to find the call, and so the key).
    public static func username(of packet: UnsafeRawBufferPointer) -> String? {
        guard isSTUN(packet), readUInt16(packet, 0) == bindingRequest else { return nil }
        var found: String?
        forEachAttribute(packet) { type, offset, length in
            if type == 0x0006 { found = String(decoding: UnsafeRawBufferPointer(rebasing: packet[offset..<offset + length]), as: UTF8.self) }
            return found == nil
        }
        return found
    }

    /// Parses a Binding request and checks its integrity with `password`; `nil` for anything else.
    public static func request(_ packet: UnsafeRawBufferPointer, password: String) -> Request? {
        guard isSTUN(packet), readUInt16(packet, 0) == bindingRequest,
              Int(readUInt16(packet, 2)) + 20 == packet.count else { return nil }
        var username: String?
        var useCandidate = false
        var integrityOffset: Int?
        forEachAttribute(packet) { type, offset, length in
            switch type {
            case 0x0006: username = String(decoding: UnsafeRawBufferPointer(rebasing: packet[offset..<offset + length]), as: UTF8.self)
            case 0x0025: useCandidate = true
            case 0x0008: integrityOffset = offset - 4
            default: break
            }
            return integrityOffset == nil
        }
        guard let username, let integrityOffset, integrityOffset + 24 <= packet.count else { return nil }
        var signed = [UInt8](packet[0..<integrityOffset])
        let adjustedLength = UInt16(integrityOffset + 24 - 20)
        signed[2] = UInt8(adjustedLength >> 8)
        signed[3] = UInt8(adjustedLength & 0xFF)
        let expected = hmacSHA1(signed, key: Array(password.utf8))
        let received = [UInt8](packet[integrityOffset + 4..<integrityOffset + 24])
        guard CRYPTO_memcmp(expected, received, 20) == 0 else { return nil }
        return Request(transactionID: [UInt8](packet[8..<20]), username: username, useCandidate: useCandidate)
    }

    /// The success response to `request`, telling the peer the address it was seen from.
    public static func successResponse(to request: Request, from address: sockaddr_in, password: String) -> [UInt8] {
        var message: [UInt8] = []
        append16(&message, bindingSuccess)
        append16(&message, 0)
        append32(&message, magicCookie)
        message += request.transactionID
        // XOR-MAPPED-ADDRESS (IPv4).
        append16(&message, 0x0020)
        append16(&message, 8)
        message += [0, 0x01]
        append16(&message, UInt16(bigEndian: address.sin_port) ^ UInt16(magicCookie >> 16))
        append32(&message, UInt32(bigEndian: address.sin_addr.s_addr) ^ magicCookie)
        // MESSAGE-INTEGRITY over everything before it, the length counting it.
        setLength(&message, message.count - 20 + 24)
        let integrity = hmacSHA1(message, key: Array(password.utf8))
        append16(&message, 0x0008)
        append16(&message, 20)
        message += integrity
        // FINGERPRINT: CRC-32 of everything before it, XOR 0x5354554E.
        setLength(&message, message.count - 20 + 8)
        let fingerprint = CRC32.checksum(message) ^ 0x5354_554E
        append16(&message, 0x8028)
        append16(&message, 4)
        append32(&message, fingerprint)
        return message
    }

    // MARK: Helpers

    private static func forEachAttribute(_ packet: UnsafeRawBufferPointer, _ body: (UInt16, Int, Int) -> Bool) {
        var offset = 20
        while offset + 4 <= packet.count {
            let type = readUInt16(packet, offset)
            let length = Int(readUInt16(packet, offset + 2))
            guard offset + 4 + length <= packet.count else { return }
            if !body(type, offset + 4, length) { return }
            offset += 4 + (length + 3) / 4 * 4
        }
    }

    private static func hmacSHA1(_ data: [UInt8], key: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        _ = HMAC(EVP_sha1(), key, Int32(key.count), data, data.count, &output, &length)
        return Array(output.prefix(Int(length)))
    }

    private static func readUInt16(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt16 {
        UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    private static func readUInt32(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        UInt32(readUInt16(bytes, offset)) << 16 | UInt32(readUInt16(bytes, offset + 2))
    }

    private static func append16(_ bytes: inout [UInt8], _ value: UInt16) {
        bytes += [UInt8(value >> 8), UInt8(value & 0xFF)]
    }

    private static func append32(_ bytes: inout [UInt8], _ value: UInt32) {
        append16(&bytes, UInt16(value >> 16))
        append16(&bytes, UInt16(value & 0xFFFF))
    }

    private static func setLength(_ bytes: inout [UInt8], _ length: Int) {
        bytes[2] = UInt8(length >> 8)
        bytes[3] = UInt8(length & 0xFF)
    }
}
