import Foundation

/// One piece of a user message: text, or an image for vision-capable models.
public enum ContentPart: Sendable, Hashable, Codable {
    /// Plain text.
    case text(String)
    /// An image by URL (`https://…` or a `data:` URL with base64 content).
    case imageURL(String)
}

/// A tool call the model asked for, fully assembled.
public struct ToolCall: Sendable, Hashable, Codable {
    /// The provider's id for the call; the tool result refers to it.
    public var id: String
    /// The tool's name.
    public var name: String
    /// The arguments as a JSON text, exactly as the model wrote them.
    public var arguments: String

    /// Creates a tool call.
    public init(id: String, name: String, arguments: String) {
        self.id = id
        self.name = name
        self.arguments = arguments
    }
}

/// One message of a conversation sent to a language model.
public enum ChatMessage: Sendable, Hashable, Codable {
    /// Instructions for the model.
    case system(String)
    /// What the user said or typed, possibly with images.
    case user([ContentPart])
    /// What the assistant said and/or the tools it called.
    /// `interrupted` marks a reply the listener cut off; `text` then holds only what was heard.
    case assistant(text: String, toolCalls: [ToolCall] = [], interrupted: Bool = false)
    /// The result of a tool call.
    case tool(callID: String, content: String)

    /// A user message with only text.
    public static func user(_ text: String) -> ChatMessage { .user([.text(text)]) }
}

/// A tool the model may call, described by a JSON Schema for its parameters.
public struct ToolDefinition: Sendable, Hashable, Codable {
    /// The tool's name (letters, digits, `_` and `-`).
    public var name: String
    /// What the tool does, for the model.
    public var description: String
    /// A JSON Schema object describing the arguments.
    public var parameters: JSONValue

    /// Creates a tool definition.
    public init(name: String, description: String, parameters: JSONValue) {
        self.name = name
        self.description = description
        self.parameters = parameters
    }
}

/// Whether and which tool the model must call.
public enum ToolChoice: Sendable, Hashable, Codable {
    case auto
    case none
    case required
    case function(String)
}

/// A request to a language model.
public struct ChatRequest: Sendable, Hashable {
    /// The conversation so far, oldest first.
    public var messages: [ChatMessage]
    /// Tools the model may call.
    public var tools: [ToolDefinition]
    /// Whether and which tool the model must call; `nil` leaves it to the provider.
    public var toolChoice: ToolChoice?
    /// Sampling temperature; `nil` leaves it to the provider.
    public var temperature: Double?
    /// The most tokens to generate; `nil` leaves it to the provider.
    public var maxTokens: Int?
    /// How much tokens already written are penalised (llama.cpp's `repeat_penalty`: 1 is none,
    /// larger repeats less); `nil` leaves it to the provider.
    public var repetitionPenalty: Double?

    /// Creates a request.
    public init(
        messages: [ChatMessage],
        tools: [ToolDefinition] = [],
        toolChoice: ToolChoice? = nil,
        temperature: Double? = nil,
        maxTokens: Int? = nil,
        repetitionPenalty: Double? = nil
    ) {
        self.messages = messages
        self.tools = tools
        self.toolChoice = toolChoice
        self.temperature = temperature
        self.maxTokens = maxTokens
        self.repetitionPenalty = repetitionPenalty
    }
}

/// Why a model stopped writing.
public enum FinishReason: Sendable, Hashable, Codable {
    case stop
    case length
    case toolCalls
    case contentFilter
    /// A reason this code does not know, kept verbatim.
    case other(String)
}

/// Token counts of one request.
public struct TokenUsage: Sendable, Hashable, Codable {
    public var promptTokens: Int
    public var completionTokens: Int
    public var totalTokens: Int { promptTokens + completionTokens }

    /// Creates a usage record.
    public init(promptTokens: Int, completionTokens: Int) {
        self.promptTokens = promptTokens
        self.completionTokens = completionTokens
    }
}

/// What a language model stream yields.
public enum LanguageModelEvent: Sendable, Hashable {
    /// More text of the reply.
    case textDelta(String)
    /// A complete tool call.
    case toolCall(ToolCall)
    /// The end of the reply, with usage when the provider reported it.
    case finished(FinishReason, TokenUsage?)
}

/// A chat model that streams its answer.
public protocol LanguageModel: Sendable {
    /// Streams the model's reply to `request`.
    ///
    /// Cancelling the consuming task cancels the request. Errors are `ProviderError`s.
    func stream(_ request: ChatRequest) -> AsyncThrowingStream<LanguageModelEvent, any Error>
}
