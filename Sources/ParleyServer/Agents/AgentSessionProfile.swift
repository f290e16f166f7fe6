import Foundation
import ParleyCore

/// An agent definition as a session runs it: its instructions, voice, turn and interruption
/// settings, model, loop settings and tools. The one place a definition becomes session
/// settings: used when a session starts and again when a handoff gives it another agent.
struct AgentSessionProfile: Sendable {
    let agent: AgentDefinition
    let settings: ServerSettings
    /// The agent's own language model, when its `llm` names an endpoint.
    let ownModel: (any LanguageModel)?

    init(agent: AgentDefinition, settings: ServerSettings) {
        self.agent = agent
        self.settings = settings
        ownModel = agent.llm.flatMap(AgentLanguageModel.make)
    }

    /// The id the agent is reported by (`default` for the server's default agent).
    var agentID: String { agent.id ?? "default" }

    /// The language model: the agent's own, else the server's.
    func model(engines: ProviderSet) -> any LanguageModel { ownModel ?? engines.makeConversationLanguageModel() }

    /// The language model's name, for traces.
    var modelName: String { ownModel == nil ? settings.languageModelName : agent.llm?.model ?? "unknown" }

    /// Gives `configuration` the agent's settings; what the agent does not set (the client's
    /// tools, audio formats, transcription hints) stays.
    func apply(to configuration: inout VoiceSessionConfiguration) {
        configuration.instructions = agent.instructions ?? settings.systemPrompt
        configuration.turnDetection = agent.manualTurns == true ? nil : ServerVADSettings(
            threshold: agent.turnDetection?.threshold ?? 0.5,
            prefixPaddingMs: agent.turnDetection?.prefixPaddingMs ?? 300,
            silenceDurationMs: agent.turnDetection?.silenceDurationMs ?? 300
        )
        configuration.speech.voice = agent.voice
        configuration.temperature = agent.llm?.temperature
        configuration.maxResponseTokens = agent.llm?.maxOutputTokens ?? (ownModel == nil ? settings.replyTokenLimit : nil)
        configuration.interruption = agent.interruption?.applied(to: InterruptionPolicy.Configuration()) ?? InterruptionPolicy.Configuration()
        configuration.vocabulary = agent.recognizerVocabulary
    }

    /// The agent loop settings: sampling, filler line, memory window, and which tools hand off.
    var agentOptions: AgentOptions {
        var options = AgentOptions()
        // Sampling for short spoken answers; the agent's settings, then the client's, come first.
        options.temperature = ownModel == nil ? settings.replyTemperature : nil
        options.repetitionPenalty = agent.llm?.repetitionPenalty
        if let line = agent.fillerLine { options.fillerLine = line }
        if let delay = agent.fillerDelayMs { options.fillerDelay = delay == 0 ? nil : .milliseconds(delay) }
        if let memory = agent.memory {
            options.window = ConversationWindow(maxMessages: memory.maxMessages ?? 40, maxTokens: memory.maxTokens ?? 8_000)
        }
        options.handoffTools = Set((agent.handoffs ?? []).map { AgentDefinition.transferToolName(to: $0.agentID) })
        return options
    }
}
