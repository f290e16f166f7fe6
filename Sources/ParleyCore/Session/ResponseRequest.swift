import Foundation

/// What one response is asked to do (a realtime `response.create`). Every field left `nil`
/// follows the session's configuration.
public struct ResponseRequest: Sendable, Hashable {
    /// Instructions for this response only.
    public var instructions: String?
    /// Whether this response speaks (`true`) or only writes.
    public var speaks: Bool?
    /// The token limit for this response.
    public var maxOutputTokens: RealtimeTokenLimit?
    /// The client's tools for this response only (an empty array offers none).
    public var clientTools: [ToolDefinition]?
    /// Whether and which tool the model must call in this response.
    public var toolChoice: ToolChoice?
    /// The client's metadata, echoed with the response.
    public var metadata: [String: String]?
    /// The voice for this response.
    public var voice: String?
    /// Sampling temperature for this response.
    public var temperature: Double?
    /// Out of band: the response reads the conversation (or `input`) but adds nothing to it,
    /// runs beside the conversation's own response, and is not interrupted by the user.
    public var isOutOfBand: Bool
    /// The messages the response reads instead of the conversation.
    public var input: [ChatMessage]?

    /// Creates a request; everything left out follows the session.
    public init(
        instructions: String? = nil, speaks: Bool? = nil, maxOutputTokens: RealtimeTokenLimit? = nil,
        clientTools: [ToolDefinition]? = nil, toolChoice: ToolChoice? = nil, metadata: [String: String]? = nil,
        voice: String? = nil, temperature: Double? = nil, isOutOfBand: Bool = false, input: [ChatMessage]? = nil
    ) {
        self.instructions = instructions
        self.speaks = speaks
        self.maxOutputTokens = maxOutputTokens
        self.clientTools = clientTools
        self.toolChoice = toolChoice
        self.metadata = metadata
        self.voice = voice
        self.temperature = temperature
        self.isOutOfBand = isOutOfBand
        self.input = input
    }
}
