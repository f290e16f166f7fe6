import Foundation

/// How an `Agent` runs a turn.
public struct AgentOptions: Sendable {
    /// The most model requests in one turn (default 5). The last one is made with tool choice
    /// `none`; if the model still asks for tools, the turn ends with `maxStepsMessage`.
    public var maxSteps: Int
    /// How long one tool call may run before its result becomes a timeout error.
    public var toolTimeout: Duration
    /// How long the tools of a step may run before the agent emits `fillerLine`; `nil` never does.
    public var fillerDelay: Duration?
    /// The short line said, once a turn, while slow tools run (default "Let me check that.").
    public var fillerLine: String
    /// What the agent says when the model is still calling tools after `maxSteps`.
    public var maxStepsMessage: String
    /// Sampling temperature; `nil` leaves it to the provider.
    public var temperature: Double?
    /// The most tokens per model reply; `nil` leaves it to the provider.
    public var maxTokens: Int?
    /// The repetition penalty of every request (`ChatRequest.repetitionPenalty`); `nil` leaves
    /// it to the provider.
    public var repetitionPenalty: Double?
    /// Which part of the history is sent with each request.
    public var window: ConversationWindow
    /// The clock tool timeouts and the filler delay are measured on.
    public var clock: any Clock<Duration>
    /// Tools the caller runs itself (a realtime client's functions): the model may call them,
    /// and a step that calls one ends the turn with `.finished(.toolCalls)` instead of running it.
    public var externalTools: [ToolDefinition] = []
    /// The tool choice of the turn's first request (`required` or a named function makes the
    /// model call a tool there; later requests are `auto`, the last `none`).
    public var firstToolChoice: ToolChoice = .auto
    /// Server tools whose calls wait for the client's approval (MCP `require_approval`): a step
    /// that calls one ends the turn like a client tool, and the call runs once approved.
    public var approvalRequiredTools: Set<String> = []
    /// Tools that hand the conversation to another agent: once one of them has run without
    /// error, the turn ends with `.finished(.toolCalls)` and the agent taking over answers next.
    public var handoffTools: Set<String> = []
    /// Calls the client approved since the last turn: they run before the turn's first request.
    public var approvedCalls: [ToolCall] = []
    /// Takes the result of a call that finished after its turn was interrupted (a tool that is
    /// not `isCancellable` runs on), so it can be kept in the conversation.
    public var keepInterruptedResult: (@Sendable (ToolCall, ToolResult) async -> Void)?

    /// Creates options; every parameter has a default suited to a voice agent.
    public init(
        maxSteps: Int = 5,
        toolTimeout: Duration = .seconds(15),
        fillerDelay: Duration? = .milliseconds(1_500),
        fillerLine: String = "Let me check that.",
        maxStepsMessage: String = "Sorry, I couldn't finish that. Could you try asking in a different way?",
        temperature: Double? = nil,
        maxTokens: Int? = nil,
        window: ConversationWindow = ConversationWindow(),
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        self.maxSteps = max(1, maxSteps)
        self.toolTimeout = toolTimeout
        self.fillerDelay = fillerDelay
        self.fillerLine = fillerLine
        self.maxStepsMessage = maxStepsMessage
        self.temperature = temperature
        self.maxTokens = maxTokens
        self.window = window
        self.clock = clock
    }
}
