import Foundation
import ParleyCore

/// Text-to-speech with espeak-ng's own voices, in the language of the text: the voice for
/// the languages no Piper voice speaks. Robotic, but it speaks about a hundred languages.
///
/// Each synthesis runs the `espeak-ng` program (GPL-3.0, never linked) as a child process that
/// takes the text on stdin and writes 22.05 kHz WAV to stdout; it takes tens of milliseconds
/// for a sentence. The runs block threads of their own dispatch queue, not the concurrency pool;
/// a run already started when its consumer cancels finishes, and its audio is dropped.
///
/// ```swift
/// let espeak = try EspeakSpeechSynthesizer()
/// for try await chunk in espeak.synthesize("Guten Tag!", options: SpeechOptions(language: "de")) { play(chunk) }
/// ```
public struct EspeakSpeechSynthesizer: SpeechSynthesizer {
    /// espeak-ng's rate for its own voices.
    public let sampleRate = 22_050
    /// The ISO-639-1 languages espeak-ng has a voice for (from `espeak-ng --voices`).
    public let languages: Set<String>?
    /// The language spoken when the options name none (or one espeak-ng lacks).
    public static let defaultLanguage = "en"

    private let path: String
    private static let queue = DispatchQueue(label: "parley.espeak-ng", attributes: .concurrent)

    /// Finds the program and asks it which languages it speaks.
    /// - Parameter executable: the `espeak-ng` program, a path or a name looked up in `PATH`.
    /// - Throws: `ProviderError` when the program is missing or does not list its voices.
    public init(executable: String = "espeak-ng") throws {
        guard let path = EspeakProgram.path(of: executable) else {
            throw ProviderError(.server, provider: "espeak-ng", message: "the espeak-ng program was not found (\(executable)); run scripts/setup")
        }
        self.path = path
        let listing = String(decoding: try EspeakProgram.run(path, arguments: ["--voices"], input: ""), as: UTF8.self)
        languages = Self.languages(inVoiceListing: listing)
    }

    /// The ISO-639-1 codes in the Language column of `espeak-ng --voices` (`de`, and `en`
    /// from `en-us`; three-letter codes such as `cmn` are left out).
    static func languages(inVoiceListing listing: String) -> Set<String> {
        Set(listing.split(separator: "\n").dropFirst().compactMap { line in
            let columns = line.split(separator: " ", omittingEmptySubsequences: true)
            guard columns.count > 1 else { return nil }
            let code = columns[1].prefix { $0 != "-" }
            return code.count == 2 && code.allSatisfy({ $0.isLowercase && $0.isASCII }) ? String(code) : nil
        })
    }

    /// Speaks `text` in `options.language` (English when it names none espeak-ng speaks) at
    /// `options.speed`, yielding the whole clip as one chunk of PCM16 at `sampleRate`. Text
    /// without letters or digits yields nothing.
    public func synthesize(_ text: String, options: SpeechOptions) -> AsyncThrowingStream<[Int16], any Error> {
        let language = options.language.flatMap { languages?.contains($0) == true ? $0 : nil } ?? Self.defaultLanguage
        let wordsPerMinute = Int(175 * (options.speed.isFinite ? min(max(options.speed, 0.5), 2.5) : 1))
        let arguments = ["-v", language == "en" ? "en-us" : language, "-s", "\(wordsPerMinute)", "--stdin", "--stdout"]
        let path = path
        let sampleRate = sampleRate
        return AsyncThrowingStream(bufferingPolicy: .unbounded) { continuation in
            guard text.contains(where: { $0.isLetter || $0.isNumber }) else {
                continuation.finish()
                return
            }
            Self.queue.async {
                do {
                    let wav = try EspeakProgram.run(path, arguments: arguments, input: text)
                    let samples = try Self.samples(ofStreamedWAV: wav, sampleRate: sampleRate)
                    if !samples.isEmpty { continuation.yield(samples) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
        }
    }

    /// The PCM16 samples of the WAV espeak-ng streams to stdout (its sizes are placeholders:
    /// everything after the `data` chunk's header is audio).
    /// - Throws: `ProviderError` when it is not 16-bit mono WAV at `sampleRate`.
    static func samples(ofStreamedWAV bytes: [UInt8], sampleRate: Int) throws -> [Int16] {
        func uint32(at offset: Int) -> Int {
            Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16 | Int(bytes[offset + 3]) << 24
        }
        let data = Array("data".utf8)
        guard bytes.count >= 44, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[12..<16].elementsEqual("fmt ".utf8),
              bytes[22] == 1, bytes[23] == 0, bytes[34] == 16, uint32(at: 24) == sampleRate,
              let dataStart = (36..<min(bytes.count - 7, 200)).first(where: { bytes[$0..<$0 + 4].elementsEqual(data) }).map({ $0 + 8 })
        else {
            throw ProviderError(.server, provider: "espeak-ng", message: "espeak-ng wrote no 16-bit mono WAV at \(sampleRate) Hz")
        }
        let count = (bytes.count - dataStart) / 2
        return (0..<count).map { Int16(bitPattern: UInt16(bytes[dataStart + 2 * $0]) | UInt16(bytes[dataStart + 2 * $0 + 1]) << 8) }
    }
}
