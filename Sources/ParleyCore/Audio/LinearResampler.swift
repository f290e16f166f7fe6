import Foundation

/// A dependency-free resampler that interpolates linearly between neighbouring samples.
///
/// Output runs up to the latest input sample (no filter delay), and there is no
/// anti-aliasing filter: good enough for speech going to a VAD or a
/// recognizer and for tests, where `ParleyLocal`'s libsoxr resampler is not available.
/// Prefer that one for audio people listen to.
public struct LinearResampler: Resampler {
    public let inputSampleRate: Int
    public let outputSampleRate: Int

    /// The last sample of the previous chunk, at index −1 of the next one.
    private var previous: Float?
    /// Position of the next output sample in input samples × `outputSampleRate`, counted
    /// from index −1 of the next chunk. Integer arithmetic keeps long streams free of drift.
    private var position = 0

    /// Creates a resampler; rates must be positive.
    /// - Throws: `AudioError.invalidFormat` for a rate that is not positive.
    public init(from inputSampleRate: Int, to outputSampleRate: Int) throws(AudioError) {
        try Self.validateRates(inputSampleRate, outputSampleRate)
        self.inputSampleRate = inputSampleRate
        self.outputSampleRate = outputSampleRate
        position = outputSampleRate
    }

    public mutating func process(_ input: [Float]) -> [Float] {
        guard !input.isEmpty else { return [] }
        let scale = outputSampleRate
        let lastPosition = input.count * scale
        var output: [Float] = []
        output.reserveCapacity(outputCount(forInputCount: input.count) + 1)
        input.withUnsafeBufferPointer { samples in
            while position <= lastPosition {
                let index = position / scale - 1
                let fraction = Float(position % scale) / Float(scale)
                let left = index < 0 ? (previous ?? samples[0]) : samples[index]
                let right = index + 1 < samples.count ? samples[index + 1] : left
                output.append(left + (right - left) * fraction)
                position += inputSampleRate
            }
        }
        position -= lastPosition
        previous = input.last
        return output
    }

    public mutating func flush() -> [Float] {
        // Output samples between the last input sample and the one that would follow it hold
        // the last value, so a whole stream yields `outputCount(forInputCount:)` samples.
        var tail: [Float] = []
        if let previous {
            while position < outputSampleRate {
                tail.append(previous)
                position += inputSampleRate
            }
        }
        previous = nil
        position = outputSampleRate
        return tail
    }
}
