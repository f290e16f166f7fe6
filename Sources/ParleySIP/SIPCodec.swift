import ParleyCore

/// The audio codecs a SIP call speaks, 20 ms per packet: Opus (wideband, preferred when offered)
/// and G.711 μ-law and A-law.
public enum SIPCodec: String, Sendable, CaseIterable {
    case opus
    case pcmu = "PCMU"
    case pcma = "PCMA"

    /// The rate of the call's PCM: 8 kHz for G.711, 24 kHz (the session's own) for Opus.
    public var sampleRate: Int { self == .opus ? 24_000 : G711.sampleRate }
    /// Samples of PCM in one 20 ms packet.
    var frameSamples: Int { sampleRate / 50 }
    /// How far the RTP timestamp moves per packet (Opus's RTP clock is 48 kHz whatever the coded rate).
    var timestampStep: UInt32 { self == .opus ? 960 : 160 }
    /// The payload type offered for it (static for G.711, RFC 3551).
    var offeredPayloadType: Int { switch self { case .opus: 111; case .pcmu: 0; case .pcma: 8 } }
    /// The SDP `rtpmap` rate and channels.
    var rtpmap: (rate: UInt32, channels: UInt8) { self == .opus ? (48_000, 2) : (8_000, 1) }
    /// The G.711 law, for G.711.
    var law: G711.Law? { switch self { case .opus: nil; case .pcmu: .muLaw; case .pcma: .aLaw } }
    /// The RTP payload type offered for RFC 4733 `telephone-event`.
    static let telephoneEventPayloadType = 101
    /// The samples of a G.711 packet (`telephone-event` packets last as long).
    static let g711FrameSamples = G711.sampleRate / 50
}
