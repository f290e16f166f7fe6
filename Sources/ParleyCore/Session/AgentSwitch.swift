import Foundation

/// What a session becomes when its agent hands the conversation to another agent: the target's
/// settings, tools and model, prepared by the transfer tool the model called.
public struct AgentSwitch: Sendable {
    /// The agent handing over (its id).
    public var fromAgent: String
    /// The agent taking over (its id).
    public var toAgent: String
    /// Why: the description of the handoff the model chose.
    public var reason: String?
    /// Gives a session's configuration the target agent's settings (instructions, voice, turn
    /// detection, interruption), keeping what the client set otherwise.
    public var reconfigure: @Sendable (inout VoiceSessionConfiguration) -> Void
    /// The target's server tools, its door's tools and its own transfer tools included.
    public var tools: ToolRegistry
    /// The target's language model.
    public var model: any LanguageModel
    /// The target's agent loop settings.
    public var agentOptions: AgentOptions
    /// Whether the target reads the conversation so far as one summary note (written by its
    /// model) instead of whole.
    public var summarizesHistory: Bool

    /// Creates a switch.
    public init(
        fromAgent: String, toAgent: String, reason: String?, reconfigure: @escaping @Sendable (inout VoiceSessionConfiguration) -> Void,
        tools: ToolRegistry, model: any LanguageModel, agentOptions: AgentOptions, summarizesHistory: Bool
    ) {
        self.fromAgent = fromAgent
        self.toAgent = toAgent
        self.reason = reason
        self.reconfigure = reconfigure
        self.tools = tools
        self.model = model
        self.agentOptions = agentOptions
        self.summarizesHistory = summarizesHistory
    }
}

/// A handoff as the session reports it: carried out (with the configuration the session now
/// has) or refused (with why).
public struct AgentHandoffReport: Sendable {
    public var fromAgent: String
    public var toAgent: String
    /// The description of the handoff the model chose.
    public var reason: String?
    /// The session's configuration as the target agent's; `nil` when the handoff was refused.
    public var configuration: VoiceSessionConfiguration?
    /// Why the handoff was refused; `nil` when it was carried out.
    public var error: String?

    /// Creates a report.
    public init(fromAgent: String, toAgent: String, reason: String?, configuration: VoiceSessionConfiguration?, error: String?) {
        self.fromAgent = fromAgent
        self.toAgent = toAgent
        self.reason = reason
        self.configuration = configuration
        self.error = error
    }
}
