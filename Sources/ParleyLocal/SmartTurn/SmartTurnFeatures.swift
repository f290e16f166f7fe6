import CParleyKernels
import Foundation

/// The log-mel spectrogram Smart Turn v3 reads, as Whisper's feature extractor computes it for
/// 8 s chunks: the last 8 s of 16 kHz audio (zeros in front when shorter), normalised to zero
/// mean and unit variance, a 400-point periodic-Hann short-time Fourier transform every 160
/// samples (reflection-padded by 200), the power spectrum through 80 Slaney-normalised mel
/// filters, log10, floored 8 below the maximum and scaled to (x + 4) / 4. 800 frames.
struct SmartTurnFeatures {
    static let sampleRate = 16_000
    static let sampleCount = 8 * sampleRate
    static let frameCount = 800
    static let melCount = 80
    static let fourierLength = 400
    static let hop = 160
    static let binCount = fourierLength / 2 + 1
    /// Columns of the transform's basis: cosines, sines, zeros up to a multiple of 64 (the
    /// matrix product's tile).
    static let basisColumns = 448

    /// [400][448]: the window times cos(2π·n·bin/400) for bins 0…200, then times −sin, then zeros.
    private let basis: [Float]
    /// [201][80]: the mel filters.
    private let filters: [Float]

    init() {
        let length = Self.fourierLength, bins = Self.binCount, columns = Self.basisColumns
        var basis = [Float](repeating: 0, count: length * columns)
        for n in 0..<length {
            let window = 0.5 - 0.5 * cos(2 * Double.pi * Double(n) / Double(length))
            for bin in 0..<bins {
                let angle = 2 * Double.pi * Double(n * bin % length) / Double(length)
                basis[n * columns + bin] = Float(window * cos(angle))
                basis[n * columns + bins + bin] = Float(-window * sin(angle))
            }
        }
        self.basis = basis
        filters = Self.melFilters()
    }

    /// The features of `audio` (16 kHz, finite), [800 frames][80 mels].
    func features(of audio: [Float]) -> [Float] {
        // The last 8 s (zeros in front when shorter), with room either side for the reflection.
        let pad = Self.fourierLength / 2, count = Self.sampleCount
        var padded = [Float](repeating: 0, count: count + 2 * pad)
        let kept = audio.suffix(count)
        padded.replaceSubrange(pad + count - kept.count..<pad + count, with: kept)
        padded.withUnsafeMutableBufferPointer { padded in
            parley_normalise(padded.baseAddress! + pad, count)
            for index in 0..<pad {
                padded[pad - 1 - index] = padded[pad + index + 1]
                padded[pad + count + index] = padded[pad + count - 2 - index]
            }
        }

        // Frame t is padded[160t ..< 160t + 400]: rows 160 floats apart, overlapping.
        let frames = Self.frameCount, columns = Self.basisColumns, bins = Self.binCount
        let spectrum = matrixProduct(padded, rowStride: Self.hop, basis, rows: frames, inner: Self.fourierLength, columns: columns)
        let power = [Float](unsafeUninitializedCapacity: frames * bins) { power, initialized in
            parley_power_spectrum(spectrum, frames, columns, bins, power.baseAddress!)
            initialized = frames * bins
        }
        var logMel = matrixProduct(power, rowStride: bins, filters, rows: frames, inner: bins, columns: Self.melCount)
        logMel.withUnsafeMutableBufferPointer { parley_whisper_log_scale($0.baseAddress!, $0.count) }
        return logMel
    }

    /// Triangular filters evenly spaced on the Slaney mel scale from 0 to 8 kHz, each scaled
    /// by 2 / its width in Hz, as [201 bins][80 filters].
    private static func melFilters() -> [Float] {
        func mel(_ hertz: Double) -> Double {
            hertz < 1000 ? 3 * hertz / 200 : 15 + log(hertz / 1000) * 27 / log(6.4)
        }
        func hertz(_ mel: Double) -> Double {
            mel < 15 ? 200 * mel / 3 : 1000 * exp((mel - 15) * log(6.4) / 27)
        }
        let nyquist = Double(sampleRate) / 2
        let edges = (0..<melCount + 2).map { hertz(mel(nyquist) * Double($0) / Double(melCount + 1)) }
        var filters = [Float](repeating: 0, count: binCount * melCount)
        for bin in 0..<binCount {
            let frequency = nyquist * Double(bin) / Double(binCount - 1)
            for filter in 0..<melCount {
                let (low, centre, high) = (edges[filter], edges[filter + 1], edges[filter + 2])
                let rising = (frequency - low) / (centre - low), falling = (high - frequency) / (high - centre)
                filters[bin * melCount + filter] = Float(max(0, min(rising, falling)) * 2 / (high - low))
            }
        }
        return filters
    }
}

/// A × B for row-major A (`rows` rows of `inner` floats, `rowStride` apart) and B (`inner` ×
/// `columns`).
func matrixProduct(_ a: [Float], rowStride: Int, _ b: [Float], rows: Int, inner: Int, columns: Int) -> [Float] {
    precondition(a.count >= (rows - 1) * rowStride + inner && b.count >= inner * columns)
    return [Float](unsafeUninitializedCapacity: rows * columns) { result, initialized in
        a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                parley_matmul(a.baseAddress!, rowStride, b.baseAddress!, columns, result.baseAddress!, columns, rows, columns, inner)
            }
        }
        initialized = rows * columns
    }
}
