#if canImport(SwiftUI)
import AVFoundation
import Foundation

/// Converts audio buffers of one format to another (rate, channels, sample type) with
/// `AVAudioConverter`, one buffer at a time, keeping the resampler's state between buffers.
final class PCMConverter {
    /// The format of the buffers produced.
    let outputFormat: AVAudioFormat
    /// The format of the buffers accepted.
    let inputFormat: AVAudioFormat
    private let converter: AVAudioConverter

    /// A converter from `input` to `output`; `nil` when AVFoundation cannot convert between them.
    init?(from input: AVAudioFormat, to output: AVAudioFormat) {
        guard let converter = AVAudioConverter(from: input, to: output) else { return nil }
        converter.downmix = true
        self.converter = converter
        self.inputFormat = input
        self.outputFormat = output
    }

    /// The buffer in the output format.
    /// - Throws: `AudioConversionError` when the conversion fails.
    func convert(_ buffer: AVAudioPCMBuffer) throws -> AVAudioPCMBuffer {
        let ratio = outputFormat.sampleRate / inputFormat.sampleRate
        let capacity = AVAudioFrameCount((Double(buffer.frameLength) * ratio).rounded(.up)) + 64
        guard let output = AVAudioPCMBuffer(pcmFormat: outputFormat, frameCapacity: capacity) else {
            throw AudioConversionError(message: "could not allocate \(capacity) frames")
        }
        var supplied = false
        var failure: NSError?
        let status = converter.convert(to: output, error: &failure) { _, inputStatus in
            if supplied {
                inputStatus.pointee = .noDataNow
                return nil
            }
            supplied = true
            inputStatus.pointee = .haveData
            return buffer
        }
        if status == .error {
            throw AudioConversionError(message: failure?.localizedDescription ?? "the converter failed")
        }
        return output
    }

    /// The first channel's samples of a Float32 buffer.
    static func floatSamples(of buffer: AVAudioPCMBuffer) -> [Float] {
        guard let channels = buffer.floatChannelData else { return [] }
        return Array(UnsafeBufferPointer(start: channels[0], count: Int(buffer.frameLength)))
    }

    /// The first channel's samples of an Int16 buffer.
    static func int16Samples(of buffer: AVAudioPCMBuffer) -> [Int16] {
        guard let channels = buffer.int16ChannelData else { return [] }
        return Array(UnsafeBufferPointer(start: channels[0], count: Int(buffer.frameLength)))
    }

    /// A mono Float32 buffer holding `samples` at `sampleRate`.
    static func buffer(_ samples: [Float], sampleRate: Double) -> AVAudioPCMBuffer? {
        guard let format = AVAudioFormat(commonFormat: .pcmFormatFloat32, sampleRate: sampleRate, channels: 1, interleaved: false),
              let buffer = AVAudioPCMBuffer(pcmFormat: format, frameCapacity: AVAudioFrameCount(max(samples.count, 1))),
              let channel = buffer.floatChannelData?[0] else { return nil }
        samples.withUnsafeBufferPointer { source in
            if let base = source.baseAddress { channel.update(from: base, count: samples.count) }
        }
        buffer.frameLength = AVAudioFrameCount(samples.count)
        return buffer
    }
}

/// A failed audio conversion.
struct AudioConversionError: Error, CustomStringConvertible {
    var message: String
    var description: String { "audio conversion failed: \(message)" }
}
#endif
