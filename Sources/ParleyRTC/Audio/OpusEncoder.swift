import COpus

/// Encodes mono PCM16 into Opus packets of 20 ms (libopus, VoIP application, in-band FEC on).
///
/// Not thread-safe: one owner at a time.
public final class OpusVoiceEncoder {
    /// The rate the encoder takes samples at (8, 12, 16, 24 or 48 kHz).
    public let sampleRate: Int
    /// Samples in one 20 ms frame at `sampleRate`.
    public var frameSamples: Int { sampleRate / 50 }
    private let encoder: OpaquePointer

    /// Creates an encoder for `sampleRate` at `bitrate` bits per second.
    /// - Throws: `RTCError.codec` for a rate Opus does not support.
    public init(sampleRate: Int, bitrate: Int = 32_000) throws(RTCError) {
        var error: Int32 = 0
        guard let encoder = opus_encoder_create(Int32(sampleRate), 1, OPUS_APPLICATION_VOIP, &error), error == OPUS_OK else {
            throw .codec("no encoder for \(sampleRate) Hz (\(error))")
        }
        self.encoder = encoder
        self.sampleRate = sampleRate
        parley_opus_set_bitrate(encoder, Int32(bitrate))
        parley_opus_set_inband_fec(encoder, 1)
        parley_opus_set_packet_loss_percent(encoder, 5)
    }

    deinit { opus_encoder_destroy(encoder) }

    /// Encodes exactly one frame (`frameSamples` samples); `nil` if libopus fails.
    public func encode(_ frame: ArraySlice<Int16>) -> [UInt8]? {
        precondition(frame.count == frameSamples, "an Opus frame is 20 ms")
        var packet = [UInt8](repeating: 0, count: 1_275)
        let length = frame.withUnsafeBufferPointer { samples in
            opus_encode(encoder, samples.baseAddress!, Int32(frameSamples), &packet, Int32(packet.count))
        }
        guard length > 0 else { return nil }
        return Array(packet.prefix(Int(length)))
    }
}

/// Decodes Opus packets into mono PCM16, with packet-loss concealment and in-band FEC.
///
/// Not thread-safe: one owner at a time.
public final class OpusVoiceDecoder {
    /// The rate the decoder produces samples at.
    public let sampleRate: Int
    private let decoder: OpaquePointer
    /// The longest packet Opus has (120 ms).
    private var maximumSamples: Int { sampleRate * 120 / 1000 }

    /// Creates a decoder producing `sampleRate` (8, 12, 16, 24 or 48 kHz).
    public init(sampleRate: Int) throws(RTCError) {
        var error: Int32 = 0
        guard let decoder = opus_decoder_create(Int32(sampleRate), 1, &error), error == OPUS_OK else {
            throw .codec("no decoder for \(sampleRate) Hz (\(error))")
        }
        self.decoder = decoder
        self.sampleRate = sampleRate
    }

    deinit { opus_decoder_destroy(decoder) }

    /// Decodes one packet; an empty array for a corrupt packet.
    public func decode(_ packet: [UInt8]) -> [Int16] {
        run(packet, samples: maximumSamples, fec: false)
    }

    /// Conceals `samples` of a lost packet: from the next packet's in-band FEC when it is at
    /// hand, else by libopus's packet-loss concealment.
    public func conceal(samples: Int, next packet: [UInt8]?) -> [Int16] {
        run(packet, samples: samples, fec: packet != nil)
    }

    private func run(_ packet: [UInt8]?, samples: Int, fec: Bool) -> [Int16] {
        var output = [Int16](repeating: 0, count: samples)
        let decoded: Int32
        if let packet {
            decoded = opus_decode(decoder, packet, Int32(packet.count), &output, Int32(samples), fec ? 1 : 0)
        } else {
            decoded = opus_decode(decoder, nil, 0, &output, Int32(samples), 0)
        }
        return decoded > 0 ? Array(output.prefix(Int(decoded))) : []
    }
}
