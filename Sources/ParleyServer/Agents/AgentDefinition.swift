import Foundation
import ParleyCore

/// An agent as a backend defines it: who it is, how it sounds, what it may do.
/// Stored as a JSON document; API keys given here are kept but never returned.
public struct AgentDefinition: Codable, Sendable, Hashable {
    /// A server tool the agent may call.
    public struct ToolSpecification: Codable, Sendable, Hashable {
        /// `builtin` (`get_current_time`, `calculate`) or `webhook`.
        public var type: String
        public var name: String
        public var description: String?
        /// JSON Schema of the arguments (webhooks).
        public var parameters: JSONValue?
        /// Where a webhook's arguments are POSTed.
        public var url: String?
        /// Extra headers for the webhook (for example its own credentials); never returned.
        public var headers: [String: String]?
        /// How long the webhook may take, in milliseconds.
        public var timeoutMs: Int?

        enum CodingKeys: String, CodingKey {
            case type, name, description, parameters, url, headers
            case timeoutMs = "timeout_ms"
        }
    }

    /// Which language model the agent uses when not the server's default.
    public struct LanguageModelSettings: Codable, Sendable, Hashable {
        public var baseURL: String?
        public var model: String?
        /// Never returned once stored.
        public var apiKey: String?
        public var temperature: Double?
        public var maxOutputTokens: Int?
        /// llama.cpp's `repeat_penalty` (1 is none); sent as `repeat_penalty`.
        public var repetitionPenalty: Double?

        enum CodingKeys: String, CodingKey {
            case baseURL = "base_url", model, apiKey = "api_key", temperature
            case maxOutputTokens = "max_output_tokens", repetitionPenalty = "repetition_penalty"
        }
    }

    /// How much history goes with each request.
    public struct MemorySettings: Codable, Sendable, Hashable {
        public var maxMessages: Int?
        public var maxTokens: Int?

        enum CodingKeys: String, CodingKey {
            case maxMessages = "max_messages", maxTokens = "max_tokens"
        }
    }

    /// Server VAD defaults for the agent's sessions (`null` = push-to-talk).
    public struct TurnDetectionSettings: Codable, Sendable, Hashable {
        public var type: String?
        public var threshold: Double?
        public var prefixPaddingMs: Int?
        public var silenceDurationMs: Int?

        enum CodingKeys: String, CodingKey {
            case type, threshold
            case prefixPaddingMs = "prefix_padding_ms", silenceDurationMs = "silence_duration_ms"
        }
    }

    public var id: String?
    public var name: String?
    public var instructions: String?
    public var voice: String?
    public var llm: LanguageModelSettings?
    public var tools: [ToolSpecification]?
    /// Remote MCP servers whose tools the agent uses.
    public var mcpServers: [MCPServerSpecification]?
    /// What the agent says, once a turn, when tools take longer than `fillerDelayMs`.
    public var fillerLine: String?
    /// How long tools may run before the filler is said (default 1500; 0 never says it).
    public var fillerDelayMs: Int?
    /// `nil` = server VAD with defaults; use `manualTurns` for push-to-talk.
    public var turnDetection: TurnDetectionSettings?
    /// Push-to-talk by default.
    public var manualTurns: Bool?
    public var memory: MemorySettings?
    /// Whether the agent's calls are recorded (`nil`: the server's `PARLEY_RECORDINGS`).
    public var recordings: Bool?
    /// Phone calls: the numbers that reach the agent and what key presses do.
    public var telephony: AgentTelephonySettings?
    /// How speech over the agent is told apart from backchannels and noise in its sessions.
    public var interruption: InterruptionSettings?
    /// Names and product words the agent expects to hear, added to Whisper's prompt so they are
    /// spelled right (`AgentDefinition+Vocabulary`).
    public var vocabulary: [String]?
    /// The agents this one may hand the conversation to (`AgentDefinition+Handoffs`).
    public var handoffs: [HandoffSpecification]?
    /// What the agent taking over reads of the conversation (`whole` when absent).
    public var handoffHistory: String?
    public var createdAt: Int?
    public var updatedAt: Int?

    enum CodingKeys: String, CodingKey {
        case id, name, instructions, voice, llm, tools, memory, recordings, telephony, interruption, vocabulary
        case mcpServers = "mcp_servers", fillerLine = "filler_line", fillerDelayMs = "filler_delay_ms"
        case turnDetection = "turn_detection", manualTurns = "manual_turns"
        case handoffs, handoffHistory = "handoff_history"
        case createdAt = "created_at", updatedAt = "updated_at"
    }

    /// Problems that make the definition unusable, one line each.
    public func validationProblems() -> [String] {
        var problems: [String] = []
        if let name, name.isEmpty || name.count > 200 { problems.append("name: must be 1 to 200 characters") }
        if let instructions, instructions.count > 100_000 { problems.append("instructions: at most 100000 characters") }
        if let temperature = llm?.temperature, !(0...2).contains(temperature) { problems.append("llm.temperature: must be between 0 and 2") }
        if let penalty = llm?.repetitionPenalty, !(0.5...2).contains(penalty) {
            problems.append("llm.repetition_penalty: must be between 0.5 and 2")
        }
        if let tokens = llm?.maxOutputTokens, tokens < 1 { problems.append("llm.max_output_tokens: must be at least 1") }
        if let url = llm?.baseURL, URL(string: url)?.scheme.map({ ["http", "https"].contains($0) }) != true {
            problems.append("llm.base_url: must be an http(s) URL")
        }
        if let threshold = turnDetection?.threshold, !(0...1).contains(threshold) {
            problems.append("turn_detection.threshold: must be between 0 and 1")
        }
        for (field, problem) in interruption?.validationProblems() ?? [] { problems.append("interruption.\(field): \(problem)") }
        if let maxMessages = memory?.maxMessages, maxMessages < 2 { problems.append("memory.max_messages: must be at least 2") }
        problems += telephony?.validationProblems() ?? []
        var names = Set<String>()
        for (index, tool) in (tools ?? []).enumerated() {
            let prefix = "tools[\(index)]"
            if !names.insert(tool.name).inserted { problems.append("\(prefix).name: \"\(tool.name)\" is used twice") }
            if tool.name.isEmpty || !tool.name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }) {
                problems.append("\(prefix).name: letters, digits, _ and - only")
            }
            switch tool.type {
            case "builtin":
                if !["get_current_time", "calculate"].contains(tool.name) {
                    problems.append("\(prefix).name: unknown builtin \"\(tool.name)\" (get_current_time, calculate)")
                }
            case "webhook":
                if tool.url.flatMap(URL.init(string:))?.scheme.map({ ["http", "https"].contains($0) }) != true {
                    problems.append("\(prefix).url: a webhook needs an http(s) URL")
                }
                if case .object? = tool.parameters {} else if tool.parameters != nil {
                    problems.append("\(prefix).parameters: must be a JSON Schema object")
                }
            default:
                problems.append("\(prefix).type: \"\(tool.type)\" is not builtin or webhook")
            }
        }
        if let fillerLine, fillerLine.count > 200 { problems.append("filler_line: at most 200 characters") }
        if let fillerDelayMs, !(0...60_000).contains(fillerDelayMs) { problems.append("filler_delay_ms: must be between 0 and 60000") }
        return problems + mcpValidationProblems() + vocabularyProblems() + handoffProblems()
    }

    /// The definition as returned to API clients: secrets removed.
    public var redacted: AgentDefinition {
        var copy = self
        copy.llm?.apiKey = nil
        copy.mcpServers = redactedMCPServers
        copy.tools = tools?.map { tool in
            var tool = tool
            tool.headers = tool.headers.map { Dictionary(uniqueKeysWithValues: $0.keys.map { ($0, "[redacted]") }) }
            return tool
        }
        return copy
    }

    /// Applies the fields `patch` sets.
    public mutating func merge(_ patch: AgentDefinition) {
        if let value = patch.name { name = value }
        if let value = patch.instructions { instructions = value }
        if let value = patch.voice { voice = value }
        if let value = patch.llm { llm = value }
        if let value = patch.tools { tools = value }
        if let value = patch.mcpServers { mcpServers = value }
        if let value = patch.fillerLine { fillerLine = value }
        if let value = patch.fillerDelayMs { fillerDelayMs = value }
        if let value = patch.turnDetection { turnDetection = value }
        if let value = patch.manualTurns { manualTurns = value }
        if let value = patch.memory { memory = value }
        if let value = patch.recordings { recordings = value }
        if let value = patch.telephony { telephony = value }
        if let value = patch.interruption { interruption = value }
        if let value = patch.vocabulary { vocabulary = value }
        if let value = patch.handoffs { handoffs = value }
        if let value = patch.handoffHistory { handoffHistory = value }
    }
}
