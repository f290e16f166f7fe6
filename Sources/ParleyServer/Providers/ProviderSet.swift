import Foundation
import ParleyCore

/// The engines the server's sessions run on, made once at start and shared by all sessions.
public struct ProviderSet: Sendable {
    /// Speech to text.
    public var recognizer: any SpeechRecognizer
    /// The default language model (agents may name another).
    public var languageModel: any LanguageModel
    /// Text to speech.
    public var synthesizer: any SpeechSynthesizer
    /// Makes each session's voice activity detector.
    public var makeVoiceActivityDetector: @Sendable () -> any VoiceActivityDetector
    /// Makes streaming resamplers.
    public var makeResampler: @Sendable (Int, Int) -> any Resampler
    /// Makes the default language model for one conversation (the embedded llama-server gives
    /// each conversation a slot that keeps its history cached); `nil` shares `languageModel`.
    public var conversationLanguageModelFactory: (@Sendable () -> any LanguageModel)?
    /// Judges pauses for `semantic_vad`; `nil` when the server has no such model.
    public var turnCompletionModel: (any TurnCompletionModel)?
    /// Reads pauses' transcripts for `semantic_vad` (the embedded SmolLM2); `nil` keeps to the word rule.
    public var turnCompletionJudge: (any TurnCompletionJudge)?
    /// Makes noise suppressors for `noise_reduction`; `nil` when the server has none.
    public var makeNoiseSuppressor: (@Sendable (NoiseReduction, Int, Int) -> any NoiseSuppressor)?
    /// Makes echo cancellers for `parley_echo_cancellation`; `nil` when the server has none.
    public var makeEchoCanceller: (@Sendable (Int, Int) -> any EchoCanceller)?
    /// The engines in use, for the start-up banner and `GET /v1/status`.
    public var components: [ProviderComponent]
    /// One line the web page shows about the engines, when there is something to say (the
    /// embedded language model is a tiny demo model).
    public var notice: String?
    /// How many times supervised provider processes were restarted.
    public var restartCount: @Sendable () -> Int
    /// Stops what the providers started (child processes).
    public var shutdown: @Sendable () async -> Void

    /// Creates a provider set.
    public init(
        recognizer: any SpeechRecognizer, languageModel: any LanguageModel, synthesizer: any SpeechSynthesizer,
        makeVoiceActivityDetector: @escaping @Sendable () -> any VoiceActivityDetector,
        makeResampler: @escaping @Sendable (Int, Int) -> any Resampler,
        conversationLanguageModelFactory: (@Sendable () -> any LanguageModel)? = nil,
        components: [ProviderComponent] = [], notice: String? = nil, restartCount: @escaping @Sendable () -> Int = { 0 },
        shutdown: @escaping @Sendable () async -> Void = {},
        turnCompletionModel: (any TurnCompletionModel)? = nil,
        turnCompletionJudge: (any TurnCompletionJudge)? = nil,
        makeNoiseSuppressor: (@Sendable (NoiseReduction, Int, Int) -> any NoiseSuppressor)? = nil,
        makeEchoCanceller: (@Sendable (Int, Int) -> any EchoCanceller)? = nil
    ) {
        self.makeEchoCanceller = makeEchoCanceller
        self.turnCompletionModel = turnCompletionModel
        self.turnCompletionJudge = turnCompletionJudge
        self.makeNoiseSuppressor = makeNoiseSuppressor
        self.recognizer = recognizer
        self.languageModel = languageModel
        self.synthesizer = synthesizer
        self.makeVoiceActivityDetector = makeVoiceActivityDetector
        self.makeResampler = makeResampler
        self.conversationLanguageModelFactory = conversationLanguageModelFactory
        self.components = components
        self.notice = notice
        self.restartCount = restartCount
        self.shutdown = shutdown
    }
}

extension ProviderSet {
    /// The default language model of one new conversation.
    public func makeConversationLanguageModel() -> any LanguageModel {
        conversationLanguageModelFactory?() ?? languageModel
    }

    /// One line per engine, for the start-up banner.
    public var summary: [String] { components.map(\.summary) }
}
