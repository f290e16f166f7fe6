import CWhisper
import Foundation
import ParleyCore

/// Speech-to-text in process with whisper.cpp: greedy decoding bounded by the utterance's
/// length, an encoder context sized to the utterance, cheap partial passes for live subtitles.
///
/// Each decode is one greedy pass without temperature fallback or carried-over context, and
/// stops after a token budget proportional to the audio (`WhisperRepetition.tokenLimit`):
/// tiny.en sometimes repeats a short utterance until it runs out of tokens, which used to take
/// whisper.cpp's full 220-token window at every fallback temperature. A decode that hits the
/// budget has its repeated tail dropped, and so does a decode that said a phrase twice.
///
/// A multilingual model (base) hears the language it is told, and detects it per utterance
/// when told none; an English-only model (tiny.en) hears English only.
///
/// Loading the model takes a moment and ~80 MB for tiny.en (~150 MB for base): create one
/// recognizer and share it between sessions. Decodes run on dedicated threads
/// (`Configuration.concurrentDecodes` of them, each with its own whisper.cpp state); the rest
/// wait their turn.
///
/// ```swift
/// let recognizer = try WhisperSpeechRecognizer(modelPath: ModelLocator().path(of: .whisperTinyEnglish))
/// let text = try await recognizer.transcribe(samples16k, isFinal: true).text
/// ```
public final class WhisperSpeechRecognizer: SpeechRecognizer {
    /// How the recognizer decodes.
    public struct Configuration: Sendable, Hashable {
        /// CPU threads per decode while other decodes run or wait. The default is half the
        /// cores (at most 4): ggml's worker threads spin while they wait, and on a loaded 2-core
        /// machine a 2-thread decode was measured 3–5× slower than a 1-thread one.
        public var threadCount: Int
        /// The most CPU threads for a final decode that starts with no other decode running or
        /// waiting — a single conversation's final transcript, which the reply waits for. It
        /// takes only cores nothing else is running on at that moment (`SpareCores`), and never
        /// fewer than `threadCount`. The default is every core (at most 4): a 2.2 s question
        /// took 217 ms on 2 threads against 342 ms on 1. Partial passes never take more than
        /// `threadCount`: the turn's final decode may start while one runs (the user stops
        /// talking), and ggml's spinning threads would then oversubscribe the cores.
        public var soloThreadCount: Int
        /// Decodes that may run at the same time (each holds a whisper.cpp state, ~30 MB). The
        /// default gives each decode `threadCount` cores of its own: ggml's worker threads spin
        /// while they wait, so oversubscribed cores slow every decode down.
        public var concurrentDecodes: Int
        /// Whether to shrink the encoder's audio context to the utterance's length (about
        /// twice as fast on short commands); utterances of 30 s or more always use the full
        /// context.
        public var sizesAudioContextToUtterance: Bool

        /// Creates a configuration; `concurrentDecodes` defaults to cores ÷ `threadCount`.
        public init(
            threadCount: Int = min(4, max(1, ProcessInfo.processInfo.activeProcessorCount / 2)),
            soloThreadCount: Int = min(4, ProcessInfo.processInfo.activeProcessorCount),
            concurrentDecodes: Int? = nil,
            sizesAudioContextToUtterance: Bool = true
        ) {
            self.threadCount = threadCount
            self.soloThreadCount = max(1, soloThreadCount)
            self.concurrentDecodes = concurrentDecodes
                ?? max(1, ProcessInfo.processInfo.activeProcessorCount / max(1, threadCount))
            self.sizesAudioContextToUtterance = sizesAudioContextToUtterance
        }

        /// Threads for a decode running alone: `soloThreadCount` as far as cores are free now.
        func soloThreads(spareCores: Int? = SpareCores.count()) -> Int {
            max(threadCount, min(soloThreadCount, spareCores ?? threadCount))
        }
    }

    /// Whisper consumes 16 kHz mono audio.
    public let sampleRate = 16_000
    /// Partial passes decode one segment, so they are cheap.
    public let supportsPartials = true
    /// The configuration the recognizer was created with.
    public let configuration: Configuration
    /// Every language Whisper knows for a multilingual model, English alone for an English-only one.
    public let languages: Set<String>?

    private let engine: WhisperEngine

    /// Loads the ggml Whisper model at `modelPath`.
    /// - Throws: `LocalModelError` when the file is missing or whisper.cpp cannot load it.
    public init(modelPath: String, configuration: Configuration = Configuration()) throws {
        guard FileManager.default.isReadableFile(atPath: modelPath) else {
            throw LocalModelError.missingFile(kind: "Whisper model", path: modelPath)
        }
        self.configuration = configuration
        engine = try WhisperEngine(modelPath: modelPath, workerCount: configuration.concurrentDecodes)
        languages = engine.isMultilingual ? WhisperLanguages.codes : ["en"]
    }

    /// Whether the model hears many languages (base) rather than English only (tiny.en).
    public var isMultilingual: Bool { engine.isMultilingual }

    /// Transcribes one utterance of 16 kHz mono samples.
    ///
    /// With `isFinal == false` the pass is meant for a growing utterance. The text holds no
    /// decoding loop: a decode that runs out of its token budget loses its repeated tail. Samples outside `[-1, 1]` are clipped and
    /// non-finite samples treated as silence.
    /// - Throws: `ProviderError` (provider `whisper`) when decoding fails, `CancellationError`
    ///   when the calling task is cancelled.
    public func transcribe(_ samples: [Float], isFinal: Bool) async throws -> Transcription {
        try await transcribe(samples, isFinal: isFinal, hints: TranscriptionHints())
    }

    /// Transcribes one utterance as `transcribe(_:isFinal:)` does, in `hints.language` (with no
    /// language, a multilingual model detects it and an English-only one hears English) and
    /// with `hints.prompt` as Whisper's initial prompt (the text the decoder takes as what was
    /// said before): it makes names come out as spelled there, and on a clip of a word or two
    /// keeps tiny.en from hearing another word ("yeah" as "you have", "wait" as "way").
    /// The transcription's `language` is the one it was decoded in, told or detected.
    /// - Throws: `ProviderError` (`invalid_request`) for a language the model does not know.
    public func transcribe(_ samples: [Float], isFinal: Bool, hints: TranscriptionHints) async throws -> Transcription {
        let language = hints.language ?? (isMultilingual ? Self.detectLanguage : "en")
        guard languages?.contains(language) == true || (language == Self.detectLanguage && isMultilingual) else {
            throw ProviderError(.invalidRequest, provider: "whisper", message: isMultilingual
                ? "Whisper knows no language '\(language)'" : "this Whisper model hears only English, not '\(language)'")
        }
        let audioDuration = Double(samples.count) / Double(sampleRate)
        guard !samples.isEmpty else {
            return Transcription(text: "", audioDuration: 0, processingDuration: 0, language: hints.language)
        }
        let prompt = hints.prompt
        let input = WhisperInput(samples: samples, sampleRate: sampleRate)
        let audioContext = configuration.sizesAudioContextToUtterance ? input.audioContext : 0
        let configuration = configuration
        let clock = ContinuousClock()
        let start = clock.now
        let tokenLimit = WhisperRepetition.tokenLimit(forAudioDuration: audioDuration)
        let decoded = try await engine.perform { context, state, abort, alone in
            try Self.decode(
                input.samples, context: context, state: state, abort: abort,
                threadCount: alone && isFinal ? configuration.soloThreads() : configuration.threadCount,
                audioContext: audioContext, tokenLimit: tokenLimit, isFinal: isFinal, language: language, prompt: prompt
            )
        }
        return Transcription(
            text: decoded.text, audioDuration: audioDuration, processingDuration: (clock.now - start).timeInterval,
            wordConfidences: decoded.wordConfidences, language: decoded.language
        )
    }

    /// whisper.cpp's language for "detect it from the audio".
    private static let detectLanguage = "auto"

    /// Runs `whisper_full_with_state` and returns the text of its segments, without a repeated
    /// tail where a segment ran out of tokens, and how sure it was of each word. Runs on a
    /// worker thread.
    private static func decode(
        _ samples: [Float], context: OpaquePointer, state: OpaquePointer, abort: AbortFlag,
        threadCount: Int, audioContext: Int, tokenLimit: Int, isFinal: Bool, language: String, prompt: String?
    ) throws -> (text: String, wordConfidences: [Float], language: String) {
        var parameters = whisper_full_default_params(WHISPER_SAMPLING_GREEDY)
        parameters.n_threads = Int32(max(1, threadCount))
        parameters.no_context = true
        parameters.no_timestamps = true
        parameters.single_segment = audioContext != 0 || !isFinal
        parameters.max_tokens = Int32(tokenLimit)
        parameters.temperature = 0
        parameters.temperature_inc = 0
        parameters.print_special = false
        parameters.print_progress = false
        parameters.print_realtime = false
        parameters.print_timestamps = false
        parameters.suppress_nst = true
        parameters.audio_ctx = Int32(audioContext)
        parameters.abort_callback = abortFlagCallback
        let status: Int32 = withExtendedLifetime(abort) {
            parameters.abort_callback_user_data = Unmanaged.passUnretained(abort).toOpaque()
            return language.withCString { languageCode in
                parameters.language = languageCode
                parameters.detect_language = false
                return (prompt ?? "").withCString { prompt in
                    parameters.initial_prompt = prompt.pointee == 0 ? nil : prompt
                    return samples.withUnsafeBufferPointer { buffer in
                        if language == detectLanguage {
                            setEncoderContext(of: state, context: context, parameters: parameters, samples: buffer)
                        }
                        return whisper_full_with_state(context, state, parameters, buffer.baseAddress, Int32(buffer.count))
                    }
                }
            }
        }
        if abort.isAborted { throw CancellationError() }
        guard status == 0 else {
            throw ProviderError(.server, provider: "whisper", message: "whisper.cpp failed to transcribe (status \(status))")
        }
        var bytes: [UInt8] = []
        var pieces: [WhisperTokenPiece] = []
        for segment in 0..<whisper_full_n_segments_from_state(state) {
            for (token, probability) in segmentTextTokens(segment, context: context, state: state) {
                if let piece = whisper_token_to_str(context, token) {
                    let text = String(cString: piece)
                    bytes.append(contentsOf: UnsafeBufferPointer(start: piece, count: strlen(piece)).map { UInt8(bitPattern: $0) })
                    pieces.append(WhisperTokenPiece(text: text, probability: probability))
                }
            }
        }
        let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let decodedLanguage = whisper_is_multilingual(context) != 0
            ? whisper_lang_str(whisper_full_lang_id_from_state(state)).map { String(cString: $0) } ?? language : "en"
        return (text, WhisperTokenPiece.wordConfidences(of: pieces), decodedLanguage)
    }

    /// Gives `state` the encoder context of `parameters` without decoding anything: whisper.cpp
    /// detects the language with the context of the state's previous decode (the full 30 s on
    /// its first, four times the work of a short utterance's) before it takes the new one. A
    /// pass in a set language that stops where its encoder would start sets it.
    private static func setEncoderContext(
        of state: OpaquePointer, context: OpaquePointer, parameters: whisper_full_params, samples: UnsafeBufferPointer<Float>
    ) {
        var setting = parameters
        setting.language = whisper_lang_str(0)
        setting.encoder_begin_callback = { _, _, _ in false }
        _ = whisper_full_with_state(context, state, setting, samples.baseAddress, Int32(samples.count))
    }

    /// The text tokens of one segment without a repeated tail: any repetition when the segment
    /// ran out of tokens, a repeated phrase when it ended by itself (whisper.cpp sometimes
    /// says a short utterance twice and stops).
    private static func segmentTextTokens(_ segment: Int32, context: OpaquePointer, state: OpaquePointer) -> [(whisper_token, Float)] {
        let endOfText = whisper_token_eot(context)
        let tokens = (0..<whisper_full_n_tokens_from_state(state, segment)).map {
            (whisper_full_get_token_id_from_state(state, segment, $0), whisper_full_get_token_p_from_state(state, segment, $0))
        }
        let text = tokens.filter { $0.0 < endOfText }
        let shortestUnit = tokens.contains { $0.0 == endOfText } ? WhisperRepetition.shortestRepeatedPhrase : 1
        let kept = WhisperRepetition.trimmingRepeatedTail(text.map(\.0), shortestUnit: shortestUnit).count
        return Array(text.prefix(kept))
    }
}

/// Audio prepared for whisper.cpp: sanitised, padded to the minimum it decodes, and the
/// encoder context that covers it.
struct WhisperInput: Sendable {
    /// Whisper's encoder sees 50 frames per second; the full context is 30 s.
    static let encoderFramesPerSecond = 50
    static let fullAudioContext = 1500
    /// whisper.cpp skips inputs shorter than 100 ms; pad to a full second of trailing silence.
    static let minimumDuration = 1.0
    /// Encoder frames (3 s) of silence kept after the speech: with less, the decoder often
    /// misses the end of speech and repeats the sentence.
    static let trailingFrames = 150
    /// The context is rounded up to a multiple of this, and never smaller than `minimumContext`
    /// (7.7 s; for 11 spoken requests of 2–3 s, 384 kept the word error rate of 512 at 1.1 %
    /// and was 18 % faster, 320 raised it to 3.4 %).
    static let contextGranularity = 64
    static let minimumContext = 384

    let samples: [Float]
    let audioContext: Int

    init(samples input: [Float], sampleRate: Int) {
        var samples = input.map { $0.isFinite ? min(1, max(-1, $0)) : 0 }
        let minimumCount = Int(Self.minimumDuration * Double(sampleRate))
        if samples.count < minimumCount {
            samples.append(contentsOf: repeatElement(0, count: minimumCount - samples.count))
        }
        self.samples = samples
        let frames = (samples.count * Self.encoderFramesPerSecond + sampleRate - 1) / sampleRate + Self.trailingFrames
        let rounded = (frames + Self.contextGranularity - 1) / Self.contextGranularity * Self.contextGranularity
        audioContext = rounded >= Self.fullAudioContext ? 0 : max(Self.minimumContext, rounded)
    }
}
