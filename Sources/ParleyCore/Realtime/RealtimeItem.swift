import Foundation

/// Who wrote a message item.
public enum RealtimeRole: String, Sendable, Hashable, CaseIterable {
    /// The person talking to the agent.
    case user
    /// The agent.
    case assistant
    /// Instructions added to the conversation.
    case system
}

/// How far an item has got.
public enum RealtimeItemStatus: String, Sendable, Hashable, CaseIterable {
    /// Finished.
    case completed
    /// Cut short (an interrupted reply, a response that stopped early).
    case incomplete
    /// Still being produced.
    case inProgress = "in_progress"
}

/// One piece of a message item's content.
public enum RealtimeContentPart: Sendable, Hashable {
    /// Text the user (or system) wrote: `input_text`.
    case inputText(String)
    /// Audio the user spoke, base64 pcm16, with its transcript once known: `input_audio`.
    case inputAudio(audio: String?, transcript: String?)
    /// An image the user sent, as a URL or data URL: `input_image` (GA only).
    case inputImage(url: String)
    /// Text the assistant wrote: GA `output_text`, beta `text`.
    case outputText(String)
    /// Speech the assistant produced, with its transcript: GA `output_audio`, beta `audio`.
    case outputAudio(audio: String?, transcript: String?)

    /// The words of the part: its text or transcript, if any.
    public var text: String? {
        switch self {
        case .inputText(let text), .outputText(let text): text
        case .inputAudio(_, let transcript), .outputAudio(_, let transcript): transcript
        case .inputImage: nil
        }
    }
}

/// An item of a realtime conversation: a message, a function call, or a function call's output.
public struct RealtimeItem: Sendable, Hashable {
    /// What the item holds.
    public enum Kind: Sendable, Hashable {
        /// A message from the user, the assistant or the system.
        case message(role: RealtimeRole, content: [RealtimeContentPart])
        /// The model asking for a function to be run. A call without a `call_id` gets a fresh one
        /// when decoded.
        case functionCall(callID: String, name: String, arguments: String)
        /// The result of a function call, with the call's id.
        case functionCallOutput(callID: String, output: String)
        /// The tools an MCP server offers: `mcp_list_tools`.
        case mcpListTools(serverLabel: String, tools: [MCPToolDescription])
        /// A call of an MCP server's tool, with its output or error once it ended: `mcp_call`.
        case mcpCall(serverLabel: String, name: String, arguments: String, approvalRequestID: String?, output: String?, error: MCPFailure?)
        /// The model asking to call an MCP tool that waits for approval: `mcp_approval_request`.
        case mcpApprovalRequest(serverLabel: String, name: String, arguments: String)
        /// The client's answer to an approval request: `mcp_approval_response`.
        case mcpApprovalResponse(approvalRequestID: String, approve: Bool, reason: String?)
    }

    /// The item's id (`item_…`); clients may leave it out when creating items.
    public var id: String?
    /// The item's status, when known.
    public var status: RealtimeItemStatus?
    /// What the item holds.
    public var kind: Kind

    /// Creates an item.
    public init(id: String?, status: RealtimeItemStatus? = nil, kind: Kind) {
        self.id = id
        self.status = status
        self.kind = kind
    }

    /// A message item.
    public static func message(
        id: String?, role: RealtimeRole, content: [RealtimeContentPart], status: RealtimeItemStatus? = nil
    ) -> RealtimeItem {
        RealtimeItem(id: id, status: status, kind: .message(role: role, content: content))
    }

    /// A function call item.
    public static func functionCall(
        id: String?, callID: String, name: String, arguments: String, status: RealtimeItemStatus? = nil
    ) -> RealtimeItem {
        RealtimeItem(id: id, status: status, kind: .functionCall(callID: callID, name: name, arguments: arguments))
    }

    /// A function call output item.
    public static func functionCallOutput(
        id: String?, callID: String, output: String, status: RealtimeItemStatus? = nil
    ) -> RealtimeItem {
        RealtimeItem(id: id, status: status, kind: .functionCallOutput(callID: callID, output: output))
    }

    /// The item's `type` in the protocol: `message`, `function_call`, `function_call_output`,
    /// or one of the `mcp_…` types.
    public var typeName: String {
        switch kind {
        case .message: "message"
        case .functionCall: "function_call"
        case .functionCallOutput: "function_call_output"
        case .mcpListTools: "mcp_list_tools"
        case .mcpCall: "mcp_call"
        case .mcpApprovalRequest: "mcp_approval_request"
        case .mcpApprovalResponse: "mcp_approval_response"
        }
    }

    /// Whether the item is one of the MCP types, whose objects carry no `object` or `status`.
    var isMCP: Bool {
        switch kind {
        case .message, .functionCall, .functionCallOutput: false
        case .mcpListTools, .mcpCall, .mcpApprovalRequest, .mcpApprovalResponse: true
        }
    }
}
