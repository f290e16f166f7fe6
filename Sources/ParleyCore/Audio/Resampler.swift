import Foundation

/// Converts a stream of mono samples from one sample rate to another, chunk by chunk.
///
/// A resampler keeps state between chunks, so the output of many small chunks joins without
/// clicks. Its output lags its input by the filter's delay; `flush()` returns the rest at the
/// end of a stream and readies the resampler for a new one. Each stream owns its resampler.
public protocol Resampler: Sendable {
    /// Sample rate of the input.
    var inputSampleRate: Int { get }
    /// Sample rate of the output.
    var outputSampleRate: Int { get }
    /// Resamples the next chunk of the stream; returns the output that is ready.
    mutating func process(_ input: [Float]) -> [Float]
    /// Ends the stream: returns the output still held back, then starts over.
    mutating func flush() -> [Float]
}

extension Resampler {
    /// Checks the rates a resampler is created with.
    /// - Throws: `AudioError.invalidFormat` for a rate that is not positive.
    static func validateRates(_ inputSampleRate: Int, _ outputSampleRate: Int) throws(AudioError) {
        guard inputSampleRate > 0 else { throw .invalidFormat(AudioFormat(sampleRate: inputSampleRate)) }
        guard outputSampleRate > 0 else { throw .invalidFormat(AudioFormat(sampleRate: outputSampleRate)) }
    }

    /// Resamples the next chunk of 16-bit samples (rounded and clipped on the way back).
    public mutating func process(_ input: [Int16]) -> [Int16] {
        SampleConversion.pcm16(process(SampleConversion.float(input)))
    }

    /// Ends a 16-bit stream; see `flush()`.
    public mutating func flushPCM16() -> [Int16] {
        SampleConversion.pcm16(flush())
    }

    /// The number of output samples `inputCount` input samples become, rounded to nearest.
    public func outputCount(forInputCount inputCount: Int) -> Int {
        (inputCount * outputSampleRate + inputSampleRate / 2) / max(inputSampleRate, 1)
    }
}
