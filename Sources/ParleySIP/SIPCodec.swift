import ParleyCore

/// The audio codecs a SIP call speaks: G.711 μ-law and A-law at 8 kHz, 20 ms per packet.
public enum SIPCodec: String, Sendable, CaseIterable {
    case pcmu = "PCMU"
    case pcma = "PCMA"

    /// The static RTP payload type (RFC 3551).
    var payloadType: UInt8 { self == .pcmu ? 0 : 8 }
    /// The G.711 law.
    var law: G711.Law { self == .pcmu ? .muLaw : .aLaw }
    /// The byte of a silent sample.
    var silence: UInt8 { self == .pcmu ? 0xFF : 0xD5 }
    /// Samples (and bytes) in one 20 ms packet.
    static let frameSamples = G711.sampleRate / 50
    /// The RTP payload type offered for RFC 4733 `telephone-event`.
    static let telephoneEventPayloadType = 101
}
