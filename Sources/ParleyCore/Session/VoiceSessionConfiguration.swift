import Foundation

/// Server-side turn detection, with the OpenAI `server_vad` parameters, or `semantic_vad` when
/// `eagerness` is set.
public struct ServerVADSettings: Sendable, Hashable, Codable {
    /// How readily `semantic_vad` ends a turn (OpenAI's `eagerness`).
    public enum Eagerness: String, Sendable, Hashable, Codable, CaseIterable {
        case low, medium, high, auto

        /// How the turn detector judges pauses at this eagerness: the model is asked after
        /// 200 ms of silence; a turn it finds complete ends there, an incomplete one waits for
        /// speech up to 8 s (low), 4 s (medium, auto) or 2 s (high) of silence, or half that
        /// when the pause's words say the thought is complete. Low needs more confidence that
        /// the turn is complete, high less.
        ///
        /// At medium and auto, words that say complete and that the recognizer was sure of end
        /// the turn after 600 ms instead: Smart Turn calls a third of complete synthetic-voice
        /// questions incomplete, and the half-maximum wait (2 s) was the p90 of a conversation,
        /// an 800 ms one its median. Measured on the `turns` corpus (0.5–1.5 s mid-thought
        /// pauses), no pause was cut off by the shorter wait: the text judge reads a dangling
        /// fragment as unfinished.
        public var completionCheck: TurnDetector.CompletionCheck {
            switch self {
            case .low: TurnDetector.CompletionCheck(afterSilenceMs: 200, threshold: 0.7, maximumSilenceMs: 8_000)
            case .medium, .auto:
                TurnDetector.CompletionCheck(afterSilenceMs: 200, threshold: 0.5, maximumSilenceMs: 4_000, completeByWordsSilenceMs: 600)
            case .high: TurnDetector.CompletionCheck(afterSilenceMs: 200, threshold: 0.3, maximumSilenceMs: 2_000)
            }
        }
    }

    /// Speech probability above which a frame counts as speech (0…1).
    public var threshold: Double
    /// Audio kept from before speech started, in milliseconds.
    public var prefixPaddingMs: Int
    /// Silence that ends a turn, in milliseconds.
    public var silenceDurationMs: Int
    /// Silence after which the session reports an idle timeout, or `nil`.
    public var idleTimeoutMs: Int?
    /// Whether the end of a turn starts a response by itself.
    public var createResponse: Bool
    /// Whether the user talking over the agent interrupts it.
    public var interruptResponse: Bool
    /// `semantic_vad` with this eagerness: a `TurnCompletionModel` judges each pause instead
    /// of `silenceDurationMs` ending the turn; `nil` is plain `server_vad`.
    public var eagerness: Eagerness?

    /// Creates server VAD settings (OpenAI's defaults, with a 300 ms silence window).
    public init(
        threshold: Double = 0.5, prefixPaddingMs: Int = 300, silenceDurationMs: Int = 300,
        idleTimeoutMs: Int? = nil, createResponse: Bool = true, interruptResponse: Bool = true, eagerness: Eagerness? = nil
    ) {
        self.eagerness = eagerness
        self.threshold = threshold
        self.prefixPaddingMs = prefixPaddingMs
        self.silenceDurationMs = silenceDurationMs
        self.idleTimeoutMs = idleTimeoutMs
        self.createResponse = createResponse
        self.interruptResponse = interruptResponse
    }
}

/// Everything about a session that a client may change while it runs.
public struct VoiceSessionConfiguration: Sendable, Hashable {
    /// The agent's instructions (its system prompt).
    public var instructions: String
    /// Server VAD turns, or `nil` for manual (push-to-talk) commits.
    public var turnDetection: ServerVADSettings?
    /// Voice and speed of the agent's speech.
    public var speech: SpeechOptions
    /// Whether responses are spoken (`true`) or text only.
    public var speaksResponses: Bool
    /// Tools the client runs itself: the session hands their calls back to the client.
    public var clientTools: [ToolDefinition]
    /// Whether and which tool the model must call (the first request of each response).
    public var toolChoice: ToolChoice
    /// Sampling temperature for the language model.
    public var temperature: Double?
    /// Most tokens per response, or `nil`.
    public var maxResponseTokens: Int?
    /// The most tokens any response may have, whatever the client asks for (`"inf"`
    /// included); nil for no ceiling beyond the model's own.
    public var outputTokenCeiling: Int?
    /// How often, in milliseconds of audio, live partial transcripts are refreshed (0 = never).
    public var partialTranscriptIntervalMs: Int
    /// The longest utterance, in milliseconds; longer speech is committed anyway.
    public var maximumUtteranceMs: Int
    /// The most audio the input buffer holds before it refuses more, in milliseconds.
    public var maximumInputBufferMs: Int
    /// With server VAD, silence after which the turn so far is transcribed while the silence
    /// window still runs, so the transcript is ready sooner when the turn ends (dropped if the
    /// user speaks again); nil transcribes only once the turn has ended.
    public var preemptiveTranscriptionAfterMs: Int?
    /// With preemptive transcription and automatic responses, whether the response starts on
    /// the early transcript while the silence window still runs. What it says is held back
    /// until the turn ends, and it is dropped if the user speaks again. Only for agents without
    /// tools, so nothing with side effects runs before the turn is certain.
    public var preemptiveGeneration: Bool
    /// How speech over the agent is told apart from backchannels and noise (Parley's
    /// `parley_interruption`); applies when `turnDetection.interruptResponse` is on.
    public var interruption: InterruptionPolicy.Configuration
    /// Noise suppression of the input before the VAD and the recognizer (`noise_reduction`),
    /// or `nil` for none.
    public var noiseReduction: NoiseReduction?
    /// Whether the session takes its own output out of its input (Parley's
    /// `parley_echo_cancellation`), for clients that cannot cancel echo themselves.
    public var cancelsEcho: Bool
    /// The language and prompt the recognizer is given for the user's speech
    /// (`input_audio_transcription.language` and `.prompt`).
    public var transcription: TranscriptionHints
    /// Names and product words the agent expects to hear (its definition's `vocabulary`),
    /// added to the recognizer's prompt so they come out spelled right; clients cannot change it.
    public var vocabulary: [String]

    /// Creates a configuration.
    public init(
        instructions: String = "You are a helpful voice assistant. Answer briefly, in one or two short sentences.",
        turnDetection: ServerVADSettings? = ServerVADSettings(),
        speech: SpeechOptions = SpeechOptions(),
        speaksResponses: Bool = true,
        clientTools: [ToolDefinition] = [],
        toolChoice: ToolChoice = .auto,
        temperature: Double? = nil,
        maxResponseTokens: Int? = nil,
        partialTranscriptIntervalMs: Int = 500,
        maximumUtteranceMs: Int = 30_000,
        maximumInputBufferMs: Int = 120_000,
        preemptiveTranscriptionAfterMs: Int? = 30,
        preemptiveGeneration: Bool = true,
        interruption: InterruptionPolicy.Configuration = InterruptionPolicy.Configuration(),
        noiseReduction: NoiseReduction? = nil,
        cancelsEcho: Bool = false,
        transcription: TranscriptionHints = TranscriptionHints(),
        vocabulary: [String] = []
    ) {
        self.transcription = transcription
        self.vocabulary = vocabulary
        self.cancelsEcho = cancelsEcho
        self.noiseReduction = noiseReduction
        self.instructions = instructions
        self.turnDetection = turnDetection
        self.speech = speech
        self.speaksResponses = speaksResponses
        self.clientTools = clientTools
        self.toolChoice = toolChoice
        self.temperature = temperature
        self.maxResponseTokens = maxResponseTokens
        self.partialTranscriptIntervalMs = partialTranscriptIntervalMs
        self.maximumUtteranceMs = maximumUtteranceMs
        self.maximumInputBufferMs = maximumInputBufferMs
        self.preemptiveTranscriptionAfterMs = preemptiveTranscriptionAfterMs
        self.preemptiveGeneration = preemptiveGeneration
        self.interruption = interruption
    }
}

extension VoiceSessionConfiguration {
    /// What the recognizer is told about the user's speech: the transcription language, and
    /// the client's prompt followed by the agent's vocabulary (last, so a recognizer that keeps
    /// only the end of a long prompt keeps the words).
    public var recognizerHints: TranscriptionHints {
        guard !vocabulary.isEmpty else { return transcription }
        let words = vocabulary.joined(separator: ", ") + "."
        let prompt = transcription.prompt.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.flatMap { $0.isEmpty ? nil : $0 }
        return TranscriptionHints(language: transcription.language, prompt: prompt.map { $0 + " " + words } ?? words)
    }
}
