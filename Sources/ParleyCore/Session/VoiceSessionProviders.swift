import Foundation

/// The engines a voice session runs on, all behind their protocols.
public struct VoiceSessionProviders: Sendable {
    /// Turns the user's speech into text.
    public var recognizer: any SpeechRecognizer
    /// Writes the agent's replies.
    public var model: any LanguageModel
    /// Speaks the agent's replies.
    public var synthesizer: any SpeechSynthesizer
    /// Tools the server runs for the agent.
    public var tools: ToolRegistry
    /// Agent loop settings (steps, tool timeout, filler line, memory window).
    public var agentOptions: AgentOptions
    /// Makes the voice activity detector of a new session.
    public var makeVoiceActivityDetector: @Sendable () -> any VoiceActivityDetector
    /// Makes a streaming resampler for synthesised speech on its way to the client.
    public var makeResampler: @Sendable (_ fromRate: Int, _ toRate: Int) -> any Resampler
    /// Makes the resampler for the user's live audio on its way to the VAD and the recognizer:
    /// by default a `SincResampler`, which holds back under a millisecond, because whatever
    /// the input resampler holds back delays the end of every turn.
    public var makeInputResampler: @Sendable (_ fromRate: Int, _ toRate: Int) -> any Resampler
    /// Judges whether a pause ends the turn, for `semantic_vad`; `nil` when the server has no
    /// such model (a session then cannot use `semantic_vad`).
    public var turnCompletionModel: (any TurnCompletionModel)?
    /// Reads a pause's transcript for a thought that is not over, where the audio model calls
    /// the pause complete; `nil` keeps to the word rule (`UnfinishedThought`).
    public var turnCompletionJudge: (any TurnCompletionJudge)?
    /// Records the conversation's audio (both sides, as heard); `nil` records nothing.
    public var recorder: CallRecorder?
    /// Makes a noise suppressor for `noise_reduction` (frames of `frameLength` samples at
    /// `sampleRate`); `nil` when the server has none (a session then cannot ask for it).
    public var makeNoiseSuppressor: (@Sendable (_ kind: NoiseReduction, _ frameLength: Int, _ sampleRate: Int) -> any NoiseSuppressor)?
    /// Makes an echo canceller for Parley's `parley_echo_cancellation` (frames of `frameLength`
    /// samples at `sampleRate`); `nil` when the server has none.
    public var makeEchoCanceller: (@Sendable (_ frameLength: Int, _ sampleRate: Int) -> any EchoCanceller)?
    /// Where the agent's transfer tools leave the handoffs they prepare; `nil` when the agent
    /// hands off to no one.
    public var handoffs: AgentHandoffs?

    /// Creates a provider set.
    public init(
        recognizer: any SpeechRecognizer,
        model: any LanguageModel,
        synthesizer: any SpeechSynthesizer,
        tools: ToolRegistry = ToolRegistry(),
        agentOptions: AgentOptions = AgentOptions(),
        makeVoiceActivityDetector: @escaping @Sendable () -> any VoiceActivityDetector,
        makeResampler: @escaping @Sendable (_ fromRate: Int, _ toRate: Int) -> any Resampler,
        makeInputResampler: @escaping @Sendable (_ fromRate: Int, _ toRate: Int) -> any Resampler = VoiceSessionProviders.sincResampler,
        turnCompletionModel: (any TurnCompletionModel)? = nil,
        turnCompletionJudge: (any TurnCompletionJudge)? = nil,
        makeNoiseSuppressor: (@Sendable (_ kind: NoiseReduction, _ frameLength: Int, _ sampleRate: Int) -> any NoiseSuppressor)? = nil,
        makeEchoCanceller: (@Sendable (_ frameLength: Int, _ sampleRate: Int) -> any EchoCanceller)? = nil
    ) {
        self.makeEchoCanceller = makeEchoCanceller
        self.makeNoiseSuppressor = makeNoiseSuppressor
        self.turnCompletionModel = turnCompletionModel
        self.turnCompletionJudge = turnCompletionJudge
        self.recognizer = recognizer
        self.model = model
        self.synthesizer = synthesizer
        self.tools = tools
        self.agentOptions = agentOptions
        self.makeVoiceActivityDetector = makeVoiceActivityDetector
        self.makeResampler = makeResampler
        self.makeInputResampler = makeInputResampler
    }

    /// A `SincResampler` between two rates; the session only asks for positive rates.
    public static func sincResampler(from inputRate: Int, to outputRate: Int) -> any Resampler {
        // Rates come from validated audio formats and the recognizer; both are positive.
        try! SincResampler(from: max(inputRate, 1), to: max(outputRate, 1))
    }
}
