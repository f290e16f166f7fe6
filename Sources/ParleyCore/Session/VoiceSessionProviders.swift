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
    /// Makes a streaming resampler between two sample rates.
    public var makeResampler: @Sendable (_ fromRate: Int, _ toRate: Int) -> any Resampler

    /// Creates a provider set.
    public init(
        recognizer: any SpeechRecognizer,
        model: any LanguageModel,
        synthesizer: any SpeechSynthesizer,
        tools: ToolRegistry = ToolRegistry(),
        agentOptions: AgentOptions = AgentOptions(),
        makeVoiceActivityDetector: @escaping @Sendable () -> any VoiceActivityDetector,
        makeResampler: @escaping @Sendable (_ fromRate: Int, _ toRate: Int) -> any Resampler
    ) {
        self.recognizer = recognizer
        self.model = model
        self.synthesizer = synthesizer
        self.tools = tools
        self.agentOptions = agentOptions
        self.makeVoiceActivityDetector = makeVoiceActivityDetector
        self.makeResampler = makeResampler
    }
}
