import Foundation
import ParleyCore
import ParleyLocal

/// Reading and writing the WAV files commands take and make.
enum AudioFiles {
    /// The largest WAV file a command reads: about 45 minutes of 48 kHz stereo float audio.
    static let maximumInputBytes = 512 << 20

    /// Mono samples of a WAV file and their rate.
    struct MonoAudio: Sendable {
        /// Samples in `[-1, 1]`, channels mixed down.
        var samples: [Float]
        /// Samples per second.
        var sampleRate: Int

        /// Duration in seconds.
        var duration: Double { Double(samples.count) / Double(max(sampleRate, 1)) }
    }

    /// Reads a WAV file (any rate, channel count and common encoding) and mixes it to mono.
    /// - Throws: `CommandFailure` naming the file and what is wrong with it.
    static func readMono(_ path: String, context: CommandContext) throws -> MonoAudio {
        let url = context.fileURL(path)
        let size: Int
        do {
            size = (try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.intValue ?? 0
        } catch {
            throw CommandFailure("cannot read \(path): \(FileErrorText.describe(error))")
        }
        guard size <= maximumInputBytes else {
            throw CommandFailure("\(path) is larger than \(maximumInputBytes >> 20) MB")
        }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw CommandFailure("cannot read \(path): \(FileErrorText.describe(error))")
        }
        do {
            let wav = try WAVFile.read(data)
            return MonoAudio(samples: wav.buffer.mixedToMono().samples, sampleRate: wav.format.sampleRate)
        } catch {
            throw CommandFailure("\(path): \(error.description)")
        }
    }

    /// Writes mono 16-bit samples as a WAV file, replacing any file at `path`.
    /// - Throws: `CommandFailure` naming the file and why it cannot be written.
    static func writeMono(_ samples: [Int16], sampleRate: Int, to path: String, context: CommandContext) throws {
        let data = WAVFile.pcm16Data(samples: samples, format: AudioFormat(sampleRate: sampleRate))
        do {
            try data.write(to: context.fileURL(path), options: .atomic)
        } catch {
            throw CommandFailure("cannot write \(path): \(FileErrorText.describe(error))")
        }
    }

    /// A resampler between two positive rates: libsoxr's, or linear interpolation should soxr refuse them.
    static func resampler(from inputRate: Int, to outputRate: Int) -> any Resampler {
        if let soxr = try? SoxrResampler(from: inputRate, to: outputRate) { return soxr }
        // Linear interpolation refuses only rates below 1; every rate here comes from a WAV header
        // (1 kHz or more), a provider's rate, or the 24 kHz protocol rate.
        return try! LinearResampler(from: max(inputRate, 1), to: max(outputRate, 1))
    }

    /// `samples` at `outputRate`, resampled in one pass.
    static func resample(_ samples: [Float], from inputRate: Int, to outputRate: Int) -> [Float] {
        guard inputRate != outputRate else { return samples }
        var resampler = resampler(from: inputRate, to: outputRate)
        return resampler.process(samples) + resampler.flush()
    }
}
