import CSoxr
import Foundation
import ParleyCore

/// A high-quality streaming resampler on libsoxr.
///
/// Output is time-aligned with the input (libsoxr absorbs its filter delay, holding back
/// the newest output until more input or `flush()` arrives) and joins across chunks without
/// discontinuities. The default quality is libsoxr's "high" (20-bit, linear phase), far
/// beyond what 16-bit speech needs, at several hundred times real time on one core.
///
/// ```swift
/// let toRecognizer = try SoxrResampler(from: 24_000, to: 16_000)
/// let speech = toRecognizer.process(SampleConversion.float(chunk.samples))
/// ```
///
/// `@unchecked Sendable`: the libsoxr handle is only used while holding `lock`.
public final class SoxrResampler: Resampler, @unchecked Sendable {
    /// libsoxr's quality recipes.
    public enum Quality: Sendable, Hashable {
        /// 16-bit precision with a wider roll-off: cheapest.
        case low
        /// 16-bit precision.
        case medium
        /// 20-bit precision (libsoxr's `SOXR_HQ`).
        case high
        /// 28-bit precision (libsoxr's `SOXR_VHQ`).
        case veryHigh

        /// The libsoxr recipe number.
        var recipe: UInt {
            switch self {
            case .low: UInt(SOXR_LQ)
            case .medium: UInt(SOXR_MQ)
            case .high: UInt(SOXR_20_BITQ)
            case .veryHigh: UInt(SOXR_28_BITQ)
            }
        }
    }

    public let inputSampleRate: Int
    public let outputSampleRate: Int

    /// Guards `handle`.
    private let lock = NSLock()
    /// The libsoxr stream.
    private let handle: soxr_t

    /// Creates a mono resampler.
    /// - Throws: `AudioError.invalidFormat` for a rate that is not positive,
    ///   `AudioError.resamplerFailed` when libsoxr refuses the configuration.
    public init(from inputSampleRate: Int, to outputSampleRate: Int, quality: Quality = .high) throws(AudioError) {
        guard inputSampleRate > 0 else { throw .invalidFormat(AudioFormat(sampleRate: inputSampleRate)) }
        guard outputSampleRate > 0 else { throw .invalidFormat(AudioFormat(sampleRate: outputSampleRate)) }
        var error: soxr_error_t?
        var ioSpec = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I)
        var qualitySpec = soxr_quality_spec(quality.recipe, 0)
        var runtimeSpec = soxr_runtime_spec(1)
        let handle = soxr_create(
            Double(inputSampleRate), Double(outputSampleRate), 1, &error, &ioSpec, &qualitySpec, &runtimeSpec
        )
        guard let handle, error == nil else {
            if let handle { soxr_delete(handle) }
            throw .resamplerFailed(error.map { String(cString: $0) } ?? "libsoxr could not create a resampler")
        }
        self.inputSampleRate = inputSampleRate
        self.outputSampleRate = outputSampleRate
        self.handle = handle
    }

    deinit { soxr_delete(handle) }

    public func process(_ input: [Float]) -> [Float] {
        guard !input.isEmpty else { return [] }
        return lock.withLock {
            input.withUnsafeBufferPointer { run(input: $0) }
        }
    }

    public func flush() -> [Float] {
        lock.withLock {
            let tail = run(input: nil)
            soxr_clear(handle)
            return tail
        }
    }

    /// Feeds `input` (or the end of the stream, for `nil`) and collects all output now ready.
    /// Must be called holding `lock`.
    private func run(input: UnsafeBufferPointer<Float>?) -> [Float] {
        let inputCount = input?.count ?? 0
        let chunkCapacity = max(outputCount(forInputCount: inputCount), 256) + 64
        var output: [Float] = []
        var consumed = 0
        while true {
            var used = 0
            var produced = 0
            let start = output.count
            output.append(contentsOf: repeatElement(0, count: chunkCapacity))
            let error = output.withUnsafeMutableBufferPointer { buffer in
                soxr_process(
                    handle,
                    input.map { UnsafeRawPointer($0.baseAddress! + consumed) },
                    inputCount - consumed,
                    &used,
                    UnsafeMutableRawPointer(buffer.baseAddress! + start),
                    chunkCapacity,
                    &produced
                )
            }
            output.removeLast(chunkCapacity - produced)
            consumed += used
            // libsoxr only fails on misuse (a broken handle); stop rather than spin.
            if error != nil || (consumed == inputCount && produced < chunkCapacity) { break }
        }
        return output
    }
}
