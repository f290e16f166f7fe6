import Foundation
import ParleyCore

/// A text-to-speech voice for test audio, run as a command (`flite`, `espeak-ng`) and returned
/// as 16 kHz samples, so tests and benchmarks hear more than one speaker.
///
/// ```swift
/// let clip = try await TestVoice.flite("rms").speak("Hold on.")
/// ```
public enum TestVoice: Sendable, Hashable, CustomStringConvertible {
    /// A flite voice by name: `slt`, `rms`, `awb`, `kal16` (`flite -lv` lists them).
    case flite(String)
    /// An eSpeak NG voice by name, e.g. `en-us`, `en-us+m3`, `en-gb+f2`, `de`, at eSpeak's
    /// default 175 words per minute or `wordsPerMinute`.
    case espeak(String, wordsPerMinute: Int? = nil)

    /// The voices a clip set is spread over: four flite speakers and two eSpeak NG ones.
    public static let assorted: [TestVoice] = [.flite("slt"), .flite("rms"), .flite("awb"), .flite("kal16"), .espeak("en-us"), .espeak("en-gb+f3")]

    /// The sample rate of every clip.
    public static let sampleRate = 16_000

    public var description: String {
        switch self {
        case .flite(let name): "flite \(name)"
        case .espeak(let name, nil): "espeak-ng \(name)"
        case .espeak(let name, let wordsPerMinute?): "espeak-ng \(name) at \(wordsPerMinute) wpm"
        }
    }

    /// Says `text` and returns mono samples at 16 kHz in [-1, 1].
    /// - Throws: `TestVoiceError` when the command fails or writes no audio.
    public func speak(_ text: String) async throws -> [Float] {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("parley-voice-\(UUID().uuidString).wav")
        defer { try? FileManager.default.removeItem(at: file) }
        let (command, arguments): (String, [String]) = switch self {
        case .flite(let name): ("flite", ["-voice", name, "-t", text, "-o", file.path])
        case .espeak(let name, let wordsPerMinute):
            ("espeak-ng", ["-v", name] + (wordsPerMinute.map { ["-s", "\($0)"] } ?? []) + ["-w", file.path, "--", text])
        }
        try await Self.run(command, arguments)
        let wav = try WAVFile.read(try Data(contentsOf: file))
        let mono = wav.buffer.mixedToMono().samples
        guard wav.format.sampleRate != Self.sampleRate else { return mono }
        var resampler = VoiceSessionProviders.sincResampler(from: wav.format.sampleRate, to: Self.sampleRate)
        return resampler.process(mono + [Float](repeating: 0, count: wav.format.sampleRate / 50))
    }

    private static func run(_ command: String, _ arguments: [String]) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [command] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        guard status == 0 else { throw TestVoiceError(command: command, status: status) }
    }
}

/// A voice command that failed.
public struct TestVoiceError: Error, CustomStringConvertible {
    /// The command run.
    public var command: String
    /// Its exit status.
    public var status: Int32

    public var description: String { "\(command) exited with status \(status)" }
}
