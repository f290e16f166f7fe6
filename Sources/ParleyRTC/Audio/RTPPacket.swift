/// An RTP packet (RFC 3550): the header fields a voice call uses and the payload.
public struct RTPPacket: Sendable, Equatable {
    public var payloadType: UInt8
    public var sequenceNumber: UInt16
    public var timestamp: UInt32
    public var ssrc: UInt32
    public var marker: Bool
    public var payload: [UInt8]

    /// Creates a packet.
    public init(payloadType: UInt8, sequenceNumber: UInt16, timestamp: UInt32, ssrc: UInt32, marker: Bool = false, payload: [UInt8]) {
        self.payloadType = payloadType
        self.sequenceNumber = sequenceNumber
        self.timestamp = timestamp
        self.ssrc = ssrc
        self.marker = marker
        self.payload = payload
    }

    /// Parses a packet, skipping CSRCs, header extensions and padding; `nil` when malformed.
    public init?(parsing bytes: [UInt8]) {
        guard bytes.count >= 12, bytes[0] >> 6 == 2 else { return nil }
        let csrcCount = Int(bytes[0] & 0x0F)
        var offset = 12 + 4 * csrcCount
        if bytes[0] & 0x10 != 0 {
            guard offset + 4 <= bytes.count else { return nil }
            offset += 4 + 4 * (Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3]))
        }
        var end = bytes.count
        if bytes[0] & 0x20 != 0, let padding = bytes.last { end -= Int(padding) }
        guard offset <= end else { return nil }
        payloadType = bytes[1] & 0x7F
        marker = bytes[1] & 0x80 != 0
        sequenceNumber = UInt16(bytes[2]) << 8 | UInt16(bytes[3])
        timestamp = bytes[4..<8].reduce(0) { $0 << 8 | UInt32($1) }
        ssrc = bytes[8..<12].reduce(0) { $0 << 8 | UInt32($1) }
        payload = Array(bytes[offset..<end])
    }

    /// The packet's bytes.
    public var bytes: [UInt8] {
        var bytes: [UInt8] = [0x80, payloadType | (marker ? 0x80 : 0), UInt8(sequenceNumber >> 8), UInt8(sequenceNumber & 0xFF)]
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: timestamp >> UInt32(shift))) }
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: ssrc >> UInt32(shift))) }
        return bytes + payload
    }

    /// Whether a datagram is RTP or RTCP (RFC 7983: first byte 128–191) and, if so, RTCP
    /// (payload types 192–223 with the marker bit).
    public static func classify(_ firstByte: UInt8, _ secondByte: UInt8) -> (isRTP: Bool, isRTCP: Bool) {
        guard (128...191).contains(firstByte) else { return (false, false) }
        return (true, (192...223).contains(secondByte))
    }
}
